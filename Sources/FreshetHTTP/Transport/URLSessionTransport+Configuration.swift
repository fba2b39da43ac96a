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
        /// The overall deadline for requests that do not set ``HTTPRequest/deadline``: the
        /// longest one exchange may take from sending to the last body byte, however steadily
        /// data arrives. 300 seconds by default; must be greater than zero. Measured on
        /// `ContinuousClock`.
        public var deadline: Duration
        /// The largest response body, in bytes after content decoding, for requests that do not
        /// set ``HTTPRequest/maximumResponseBytes``. 64 MiB (67,108,864) by default; at least 0.
        public var maximumResponseBytes: Int

        /// A configuration with the given settings; the defaults are 30 s, 6 connections, a
        /// 300 s deadline and 64 MiB.
        public init(timeout: Duration = .seconds(30), maximumConnectionsPerHost: Int = 6, deadline: Duration = .seconds(300),
                    maximumResponseBytes: Int = 64 << 20) {
            self.timeout = timeout
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.deadline = deadline
            self.maximumResponseBytes = maximumResponseBytes
        }
    }
}
