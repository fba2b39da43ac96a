import Foundation

/// The freshness policy and retry settings a collection was read under, recorded in the
/// `fetched`, `notModified` and `fetchFailed` events a refresh appends (docs/log-format.md
/// §6.7), so `freshet why` judges `.maxAge`, `.always` and `.manual` collections as the app did.
/// Logs written before it was recorded have none (the field is absent; readers skip it).
public struct ReadPolicy: Sendable, Hashable {
    public var freshness: FreshnessPolicy
    public var retry: Configuration.RetryPolicy

    public init(freshness: FreshnessPolicy, retry: Configuration.RetryPolicy) {
        self.freshness = freshness
        self.retry = retry
    }

    /// The policy as `freshet why` prints it: `http`, `always`, `manual`, `maxAge=30` (seconds,
    /// with a fraction only when there is one).
    public static func name(_ policy: FreshnessPolicy) -> String {
        switch policy {
        case .http: "http"
        case .always: "always"
        case .manual: "manual"
        case .maxAge(let d): "maxAge=\(seconds(d))"
        }
    }

    /// A duration in seconds: `30`, or `0.25` when it has a fraction.
    public static func seconds(_ d: Duration) -> String {
        d.components.attoseconds == 0 ? "\(d.components.seconds)" : "\(Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18)"
    }
}

extension ReadPolicy {
    /// Microseconds of a duration, clamped to Int64.
    static func micros(_ d: Duration) -> Int64 {
        let (s, atto) = d.components
        let (whole, overflow) = s.multipliedReportingOverflow(by: 1_000_000)
        return overflow ? (s < 0 ? .min : .max) : whole.addingReportingOverflow(atto / 1_000_000_000_000).partialValue
    }

    /// Fields: 1 freshness (uint: 1 always, 2 maxAge, 3 http, 4 manual), 2 maxAge in µs
    /// (int, with 2 only), 3 maxAttempts (uint), 4 baseDelay µs, 5 maxDelay µs (int),
    /// 6 jitter in millionths (uint), 7 maxRetryAfter µs (int).
    func encode(into w: inout ByteWriter) {
        switch freshness {
        case .always: w.field(1, uint: 1)
        case .maxAge(let d):
            w.field(1, uint: 2)
            w.field(2, int: Self.micros(d))
        case .http: w.field(1, uint: 3)
        case .manual: w.field(1, uint: 4)
        }
        w.field(3, uint: UInt64(clamping: retry.maxAttempts))
        w.field(4, int: Self.micros(retry.baseDelay))
        w.field(5, int: Self.micros(retry.maxDelay))
        w.field(6, uint: UInt64((retry.jitter * 1_000_000).rounded()))
        w.field(7, int: Self.micros(retry.maxRetryAfter))
    }

    static func decodeField(_ reader: ByteReader) throws -> ReadPolicy {
        var r = reader
        var code: UInt64 = 0
        var maxAge: Int64 = 0
        var retry = Configuration.RetryPolicy()
        try r.fields { tag, v in
            switch tag {
            case 1: code = try v.uint()
            case 2: maxAge = try v.int()
            case 3: retry.maxAttempts = Int(clamping: try v.uint())
            case 4: retry.baseDelay = .microseconds(try v.int())
            case 5: retry.maxDelay = .microseconds(try v.int())
            case 6: retry.jitter = min(1, Double(try v.uint()) / 1_000_000)
            case 7: retry.maxRetryAfter = .microseconds(try v.int())
            default: break
            }
        }
        let freshness: FreshnessPolicy
        switch code {
        case 1: freshness = .always
        case 2: freshness = .maxAge(.microseconds(maxAge))
        case 3: freshness = .http
        case 4: freshness = .manual
        default: throw FormatError(reason: "read policy has unknown freshness \(code)")
        }
        return ReadPolicy(freshness: freshness, retry: retry)
    }
}

extension Event {
    /// The policy a refresh recorded in this event (`fetched`, `notModified`, `fetchFailed`); nil for other events.
    public var readPolicy: ReadPolicy? {
        switch self {
        case .fetched(let f): f.readPolicy
        case .notModified(let n): n.readPolicy
        case .fetchFailed(let f): f.readPolicy
        default: nil
        }
    }
}
