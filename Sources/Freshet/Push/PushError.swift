/// A problem a push source met: an event it could not fold, or a connection that failed.
///
/// Match on the code with `catch PushError.rejected`. Problems with single events
/// (``unknownCollection``, ``malformedEvent``, ``ignoredLine``, ``eventTooLarge``) never stop
/// the stream: the event is skipped, counted in ``EventSourceStatistics`` and listed in
/// ``EventSource/problems``; nothing already folded is touched.
public struct PushError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem this is.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A change for a collection the source has no resource for: skipped.
        public static let unknownCollection = Code(rawValue: "unknownCollection")
        /// An event whose data is not a change message (docs/realtime.md), or whose rows the
        /// store refuses (a row without an ID, an ID too long): skipped.
        public static let malformedEvent = Code(rawValue: "malformedEvent")
        /// A line the event-stream format says to ignore (an unknown field, a `retry` that is
        /// not digits, an `id` with NUL): ignored, as WHATWG HTML §9.2.6 requires.
        public static let ignoredLine = Code(rawValue: "ignoredLine")
        /// An event larger than ``EventSource/Configuration/maximumEventBytes``: dropped.
        public static let eventTooLarge = Code(rawValue: "eventTooLarge")
        /// A connection attempt or an open stream failed (refused, lost, timed out, a 5xx,
        /// 408 or 429): the source reconnects after a backoff.
        public static let connectionFailed = Code(rawValue: "connectionFailed")
        /// The server answered with a status the source does not retry (a 3xx or a 4xx other
        /// than 408 and 429): ``EventSource/run()`` throws it.
        public static let rejected = Code(rawValue: "rejected")
        /// A 200 whose `Content-Type` is not `text/event-stream`: ``EventSource/run()`` throws
        /// it (WHATWG HTML §9.2.3 "fail the connection").
        public static let wrongContentType = Code(rawValue: "wrongContentType")
        /// The store could not append (closed, map full, storage): ``EventSource/run()``
        /// throws it; the event was not folded and is requested again on the next run.
        public static let store = Code(rawValue: "store")
        /// The source's ``EventSource/Configuration`` cannot work (a `source` name that is not
        /// 1 to 200 bytes without control characters, `maximumEventBytes` below 1):
        /// ``EventSource/run()`` throws it before connecting.
        public static let invalidConfiguration = Code(rawValue: "invalidConfiguration")

        /// Matches a ``PushError`` by code, so callers write `catch PushError.rejected`.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? PushError)?.code == code
        }
    }

    public let code: Code
    /// One line that says what happened, for a person.
    public let message: String
    /// The event's ID when the problem is about one event (`""` when it had none).
    public let eventID: String?
    /// The HTTP status, for ``Code/rejected`` and a failed connection the server answered.
    public let status: Int?

    public init(_ code: Code, _ message: String, eventID: String? = nil, status: Int? = nil) {
        self.code = code
        self.message = message
        self.eventID = eventID
        self.status = status
    }

    public var description: String { "\(code): \(message)" }

    public static let unknownCollection = Code.unknownCollection
    public static let malformedEvent = Code.malformedEvent
    public static let ignoredLine = Code.ignoredLine
    public static let eventTooLarge = Code.eventTooLarge
    public static let connectionFailed = Code.connectionFailed
    public static let rejected = Code.rejected
    public static let wrongContentType = Code.wrongContentType
    public static let store = Code.store
    public static let invalidConfiguration = Code.invalidConfiguration
}
