extension URLSessionTransport {
    /// Settings for a ``URLSessionTransport``, fixed when it is created.
    public struct Configuration: Sendable, Hashable {
        /// The idle timeout for requests that do not set ``HTTPRequest/timeout``: how long a
        /// request may wait without receiving any data before it fails with
        /// ``TransportError/timedOut``. 30 seconds by default; must be greater than zero.
        ///
        /// This is `URLRequest.timeoutInterval`, an idle timeout that restarts whenever data
        /// arrives, not a deadline for the whole exchange (observed to behave the same way with
        /// FoundationNetworking on Linux: a 1 s timeout let a body trickle in over 3 s).
        /// FoundationNetworking only counts whole seconds, so on Linux this and
        /// ``HTTPRequest/timeout`` are rounded up to whole seconds, at least 1 s; the rounded
        /// value is the one named in ``TransportError/timedOut`` messages.
        public var timeout: Duration
        /// How many connections the session may open to one host at the same time
        /// (`URLSessionConfiguration.httpMaximumConnectionsPerHost`). 6 by default; at least 1.
        public var maximumConnectionsPerHost: Int

        /// A configuration with the given settings; the defaults are 30 s and 6 connections.
        public init(timeout: Duration = .seconds(30), maximumConnectionsPerHost: Int = 6) {
            self.timeout = timeout
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
        }
    }
}
