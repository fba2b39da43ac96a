/// The rules ``HTTPTransport/send(_:following:)`` follows redirects by, and the origin that
/// credentials are bound to.
///
/// ```swift
/// let policy = RedirectPolicy(origin: Origin(baseURL), boundHeaderNames: ["X-Api-Key"])
/// let answer = try await transport.send(request, following: policy)
/// ```
///
/// The rules (RFC 9110 §15.4, the Fetch standard's "HTTP-redirect fetch"):
/// - 301, 302, 303, 307 and 308 with a usable `Location` are redirects; other 3xx (300, 304,
///   305, 306) are answers and are returned.
/// - `GET` and `HEAD` follow all five, to any `http`/`https` origin. A hop that leaves
///   ``origin`` is sent without the bound headers (``boundHeaderNames`` plus
///   ``alwaysBoundHeaderNames``), and so is every later hop, even one that comes back.
/// - Other methods (`POST`, `PUT`, `PATCH`, `DELETE`) follow only 307 and 308, only within
///   ``origin``, with the same method, headers and body. A 301/302/303 (which a browser
///   would turn into a `GET`) and a 307/308 to another origin are not followed: the 3xx is
///   returned with a ``RedirectRefusal``.
/// - Userinfo in a `Location` is removed: credentials are never taken from a server's URL.
/// - More than ``maxRedirects`` hops throw ``TransportError/badResponse``.
public struct RedirectPolicy: Sendable, Hashable {
    /// The origin the bound headers may be sent to; nil: the first request's own origin.
    public var origin: Origin?
    /// Header names (any case) that are sent only to ``origin``, such as configured default
    /// headers; ``alwaysBoundHeaderNames`` are added to them.
    public var boundHeaderNames: Set<String>
    /// The most redirects one exchange follows. Default 20 (the Fetch standard's limit).
    public var maxRedirects: Int

    /// Headers that carry credentials and never leave their origin: `Authorization`,
    /// `Proxy-Authorization`, `Cookie`, `Idempotency-Key`.
    public static let alwaysBoundHeaderNames: Set<String> = ["authorization", "proxy-authorization", "cookie", "idempotency-key"]

    /// A policy binding `boundHeaderNames` (and ``alwaysBoundHeaderNames``) to `origin`.
    ///
    /// Precondition: `maxRedirects` is at least 0.
    public init(origin: Origin? = nil, boundHeaderNames: Set<String> = [], maxRedirects: Int = 20) {
        precondition(maxRedirects >= 0, "RedirectPolicy.maxRedirects must be at least 0, got \(maxRedirects)")
        self.origin = origin
        self.boundHeaderNames = Set(boundHeaderNames.map(FieldSyntax.asciiLowercased)).union(Self.alwaysBoundHeaderNames)
        self.maxRedirects = maxRedirects
    }
}
