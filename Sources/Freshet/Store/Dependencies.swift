import Foundation
import FreshetHTTP

/// Every source of non-determinism the store uses, passed in when it is built: the wall
/// clock for event timestamps and the network. ``live`` uses the system clock and
/// URLSession; tests pass fixed values.
public struct Dependencies: Sendable {
    /// The current time, read when an event is appended (never inside the fold).
    public var now: @Sendable () -> Date
    /// Sends HTTP requests for `refresh`.
    public var transport: any HTTPTransport

    public init(now: @escaping @Sendable () -> Date, transport: any HTTPTransport) {
        self.now = now
        self.transport = transport
    }

    /// The system clock and a `URLSessionTransport` with default settings.
    public static var live: Dependencies {
        Dependencies(now: { Date() }, transport: URLSessionTransport())
    }
}
