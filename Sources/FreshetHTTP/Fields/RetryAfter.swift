import Foundation

/// A parsed `Retry-After` field (RFC 9110 §10.2.3): how long a client should wait before
/// trying again after a 503, a 429 (RFC 6585 §4) or a 3xx.
///
/// ```swift
/// RetryAfter(parsing: "120")                            // .seconds(120)
/// RetryAfter(parsing: "Fri, 31 Dec 1999 23:59:59 GMT")  // .date(1999-12-31 23:59:59 +0000)
/// RetryAfter(parsing: "soon")                           // nil
/// ```
public enum RetryAfter: Sendable, Hashable {
    /// `delay-seconds`: wait this many seconds after the response was received. Never
    /// negative; capped at 2147483648 (RFC 9111 §1.2.2's rule for delta-seconds).
    case seconds(Int)
    /// `HTTP-date`: wait until this instant.
    case date(Date)

    /// Parses a `Retry-After` field value: `1*DIGIT` or an HTTP-date (any of the three forms,
    /// see ``HTTPDate/parse(_:now:)``), with surrounding spaces and tabs ignored.
    ///
    /// - Parameters:
    ///   - fieldValue: the field value.
    ///   - now: passed to ``HTTPDate/parse(_:now:)`` for a two-digit RFC 850 year only.
    /// - Returns: `nil` for anything else: empty, negative (`-5`), fractional (`1.5`), a
    ///   number followed by text, or a malformed date.
    public init?(parsing fieldValue: String, now: Date = Date()) {
        let trimmed = FieldSyntax.trimmingWhitespace(fieldValue[...])
        if let seconds = FieldSyntax.deltaSeconds(trimmed) {
            self = .seconds(seconds)
        } else if let date = HTTPDate.parse(String(trimmed), now: now) {
            self = .date(date)
        } else {
            return nil
        }
    }

    /// Parses the first `Retry-After` line of `headers`; `nil` when there is none or it is
    /// not valid.
    public init?(headers: HTTPHeaders, now: Date = Date()) {
        guard let value = headers["Retry-After"] else { return nil }
        self.init(parsing: value, now: now)
    }

    /// How long to wait counted from `receivedAt`, the time the response was received: the
    /// seconds as given, or the time until the date, never negative (a date in the past means
    /// "now").
    public func delay(from receivedAt: Date) -> Duration {
        switch self {
        case .seconds(let seconds):
            return .seconds(seconds)
        case .date(let date):
            let interval = date.timeIntervalSince(receivedAt)
            return interval > 0 ? .seconds(interval) : .zero
        }
    }
}
