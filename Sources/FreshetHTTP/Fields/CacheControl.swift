/// The directives of a response's `Cache-Control` field (RFC 9111 §5.2), parsed tolerantly.
///
/// ```swift
/// let cacheControl = CacheControl(parsing: "public, max-age=300, stale-while-revalidate=60")
/// cacheControl.maxAge                // 300
/// cacheControl.isPublic              // true
/// cacheControl.staleWhileRevalidate  // 60
/// ```
///
/// Parsing never fails; it follows what RFC 9111 asks of a recipient:
/// - Directive names are case-insensitive (§5.2); arguments may be tokens or quoted strings
///   (`max-age="60"` is read as 60 although senders must not write it, §5.2.1.1); whitespace
///   around elements and `=` is ignored; empty list elements are skipped (RFC 9110 §5.6.1).
/// - Several `Cache-Control` lines form one list ( ``init(headers:)`` joins them with commas,
///   RFC 9110 §5.3).
/// - Freshness directives (`max-age`, `s-maxage`) that are invalid (no argument, negative,
///   non-numeric, fractional) or repeated with different values make the response stale: the
///   value becomes 0 (RFC 9111 §4.2.1 lets a cache use the first occurrence or treat the
///   response as stale; the store takes the safe side). Repeats with the same value are fine.
/// - delta-seconds larger than 2^31 are capped at 2147483648 (RFC 9111 §1.2.2).
/// - `no-cache` and `private` with a field-name argument (`no-cache="Set-Cookie"`) are read as
///   the unqualified directive, as most caches do (RFC 9111 §5.2.2.4, §5.2.2.7).
/// - `stale-while-revalidate` and `stale-if-error` (RFC 5861 §3, §4) only ever extend what may
///   be served, so an invalid one is ignored (`nil`) and repeats keep the smallest value.
/// - Directive names that are not tokens are skipped; other directives are kept in
///   ``otherDirectives``.
///
/// Conflicts between directives (`max-age=60, no-cache`) are kept as received; the freshness
/// calculation honours the most restrictive one (RFC 9111 §4.2.1).
public struct CacheControl: Sendable, Hashable {
    /// `max-age` (RFC 9111 §5.2.2.1): seconds after the response was generated during which it
    /// is fresh; `nil` when absent; 0 when invalid or given twice with different values.
    public var maxAge: Int?
    /// `s-maxage` (RFC 9111 §5.2.2.10): like ``maxAge`` for shared caches, in seconds; same
    /// rules for invalid and repeated values.
    public var sMaxAge: Int?
    /// `no-cache` (RFC 9111 §5.2.2.4): a stored response must be revalidated before every use.
    public var noCache: Bool
    /// `no-store` (RFC 9111 §5.2.2.5): the response must not be stored.
    public var noStore: Bool
    /// `must-revalidate` (RFC 9111 §5.2.2.2): once stale, the response must not be used
    /// without successful revalidation, not even when disconnected.
    public var mustRevalidate: Bool
    /// `private` (RFC 9111 §5.2.2.7): intended for a single user; a private cache (such as
    /// this store) may keep it.
    public var isPrivate: Bool
    /// `public` (RFC 9111 §5.2.2.9): any cache may store the response.
    public var isPublic: Bool
    /// `immutable` (RFC 8246 §2): the content will not change while fresh; no need to
    /// revalidate it on a user-initiated reload.
    public var immutable: Bool
    /// `stale-while-revalidate` (RFC 5861 §3): seconds after becoming stale during which the
    /// response may be shown while it is revalidated in the background; `nil` when absent or
    /// invalid.
    public var staleWhileRevalidate: Int?
    /// `stale-if-error` (RFC 5861 §4): seconds after becoming stale during which the response
    /// may be shown when revalidation fails; `nil` when absent or invalid.
    public var staleIfError: Int?
    /// Every other directive, by lowercased name, with its unquoted argument, or `""` when it
    /// had none (e.g. `["no-transform": "", "community": "UCI"]`). The first occurrence wins.
    public var otherDirectives: [String: String]

    /// A `Cache-Control` with the given directives; all absent by default.
    public init(
        maxAge: Int? = nil,
        sMaxAge: Int? = nil,
        noCache: Bool = false,
        noStore: Bool = false,
        mustRevalidate: Bool = false,
        isPrivate: Bool = false,
        isPublic: Bool = false,
        immutable: Bool = false,
        staleWhileRevalidate: Int? = nil,
        staleIfError: Int? = nil,
        otherDirectives: [String: String] = [:]
    ) {
        self.maxAge = maxAge
        self.sMaxAge = sMaxAge
        self.noCache = noCache
        self.noStore = noStore
        self.mustRevalidate = mustRevalidate
        self.isPrivate = isPrivate
        self.isPublic = isPublic
        self.immutable = immutable
        self.staleWhileRevalidate = staleWhileRevalidate
        self.staleIfError = staleIfError
        self.otherDirectives = otherDirectives
    }

    /// Parses one `Cache-Control` field value (or several joined with commas). Never fails;
    /// unusable input gives the empty `CacheControl()` (see the rules on the type).
    public init(parsing fieldValue: String) {
        self.init()
        for element in FieldSyntax.splitList(fieldValue[...]) {
            let (name, argument) = FieldSyntax.nameAndArgument(element)
            guard FieldSyntax.isToken(name) else { continue }
            switch name {
            case "max-age":
                maxAge = Self.freshness(maxAge, argument)
            case "s-maxage":
                sMaxAge = Self.freshness(sMaxAge, argument)
            case "no-cache":
                noCache = true
            case "no-store":
                noStore = true
            case "must-revalidate":
                mustRevalidate = true
            case "private":
                isPrivate = true
            case "public":
                isPublic = true
            case "immutable":
                immutable = true
            case "stale-while-revalidate":
                staleWhileRevalidate = Self.staleness(staleWhileRevalidate, argument)
            case "stale-if-error":
                staleIfError = Self.staleness(staleIfError, argument)
            default:
                if otherDirectives[name] == nil {
                    otherDirectives[name] = argument ?? ""
                }
            }
        }
    }

    /// Parses every `Cache-Control` line of `headers` as one list (RFC 9110 §5.3); the empty
    /// `CacheControl()` when there is none.
    public init(headers: HTTPHeaders) {
        self.init(parsing: headers.combinedValue(for: "Cache-Control") ?? "")
    }

    /// One more occurrence of a freshness directive: invalid or conflicting means stale (0).
    private static func freshness(_ previous: Int?, _ argument: String?) -> Int {
        guard let argument, let seconds = FieldSyntax.deltaSeconds(argument) else { return 0 }
        guard let previous else { return seconds }
        return previous == seconds ? seconds : 0
    }

    /// One more occurrence of a directive that allows serving stale content: invalid ones are
    /// ignored, repeats keep the smallest.
    private static func staleness(_ previous: Int?, _ argument: String?) -> Int? {
        guard let argument, let seconds = FieldSyntax.deltaSeconds(argument) else { return previous }
        return min(previous ?? seconds, seconds)
    }
}
