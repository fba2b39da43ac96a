import Foundation

extension EventSource {
    /// What an ``EventSource`` connects to, which collections it feeds, and how it reconnects.
    public struct Configuration: Sendable {
        /// The stream's URL (absolute). Credentials (``Store/Configuration/authentication``,
        /// ``Store/Configuration/defaultHeaders``) are sent only when it has the store's
        /// credential origin, as for fetches (docs/security.md).
        public var url: URL
        /// The push source's name in ``PushOrigin/source`` and ``SyncMark/pushCursors``: one
        /// name per stream, stable across launches (the cursor is looked up by it).
        public var source: String
        /// For each collection name a change message may carry, the resource whose collection
        /// it feeds and whose ID rule reads its rows. A message naming another collection is
        /// skipped and counted (``PushError/unknownCollection``).
        public var resources: [String: Resource]
        /// The event type that carries change messages; events of other types are skipped and
        /// counted. Default `"change"`.
        public var eventType: String = "change"
        /// The reconnection time until the server sends `retry:` (WHATWG HTML §9.2.6). Default 3 s.
        public var reconnectionTime: Duration = .seconds(3)
        /// The shortest wait between two connection attempts, whatever `retry:` or jitter say,
        /// so a server that closes at once never makes a tight loop. Default 250 ms.
        public var minimumDelay: Duration = .milliseconds(250)
        /// The longest wait between two attempts. Default 60 s.
        public var maximumDelay: Duration = .seconds(60)
        /// The fraction of a delay that jitter may remove, 0 ... 1. Default 0.5.
        public var jitter: Double = 0.5
        /// The most bytes one event may take (``EventStreamParser/maximumEventBytes``). Default 1 MiB.
        public var maximumEventBytes: Int = 1 << 20

        /// `source` must be 1 to 200 bytes of UTF-8 without control characters (checked by
        /// ``EventSource/init(store:configuration:transport:)``). With several resources for
        /// one collection name, the last one counts.
        public init(url: URL, source: String, resources: [Resource]) {
            self.url = url
            self.source = source
            self.resources = Dictionary(resources.map { ($0.collection, $0) }, uniquingKeysWith: { _, last in last })
        }

        /// The wait before the next connection attempt: the reconnection time (the server's
        /// `retry:`, else ``reconnectionTime``, at least ``minimumDelay``) doubled for each
        /// consecutive attempt that delivered no event (`failures`), at most
        /// ``maximumDelay``, less up to ``jitter`` of it (`random` uniform in 0 ..< 1), and
        /// never under ``minimumDelay``.
        public func delay(failures: Int, reconnection: Duration, random: Double) -> Duration {
            let floor = minimumDelay.seconds
            let base = min(maximumDelay.seconds, max(floor, reconnection.seconds))
            let grown = min(maximumDelay.seconds, base * pow(2, Double(min(max(failures, 0), 62))))
            let jittered = grown * (1 - min(1, max(0, jitter)) * random)
            return .milliseconds(Int64((max(floor, jittered) * 1000).rounded()))
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    fileprivate var seconds: Double {
        let (s, a) = components
        return Double(s) + Double(a) * 1e-18
    }
}
