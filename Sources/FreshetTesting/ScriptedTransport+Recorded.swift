import Foundation
import FreshetHTTP

extension ScriptedTransport {
    /// One request the transport received, in arrival order, with the test time it arrived.
    public struct Recorded: Sendable, Hashable, CustomStringConvertible {
        /// The request exactly as the caller sent it.
        public var request: HTTPRequest
        /// The instant of the transport's ``TestClock`` when the request arrived, or `nil`
        /// when the transport was made without a clock.
        public var instant: TestClock.Instant?
        /// The date of the transport's ``TestClock`` when the request arrived (start date plus
        /// elapsed test time), or `nil` when the transport was made without a clock.
        public var date: Date?
        /// Whether a route matched the request; `false` for a request that failed as
        /// unmatched.
        public var matched: Bool

        /// A record of `request`, arrived at `instant` / `date`.
        public init(request: HTTPRequest, instant: TestClock.Instant? = nil, date: Date? = nil, matched: Bool = true) {
            self.request = request
            self.instant = instant
            self.date = date
            self.matched = matched
        }

        /// The method and the URL's path and query as sent, e.g. `"GET /api/v2/pokemon?limit=20"`:
        /// handy for asserting the exact sequence of requests.
        public var description: String {
            "\(request.method.rawValue) \(RequestTarget(url: request.url).description)"
        }
    }
}
