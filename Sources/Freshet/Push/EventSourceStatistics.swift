/// What an ``EventSource`` has done since it was created: counts only, never reset.
public struct EventSourceStatistics: Sendable, Hashable {
    /// Connection attempts (the first and every reconnection).
    public var connectionAttempts = 0
    /// Attempts that opened a stream (200 with `text/event-stream`).
    public var connections = 0
    /// Events dispatched by the stream (of any type).
    public var events = 0
    /// Changes appended and folded (``PushResult/applied(_:)``).
    public var applied = 0
    /// Re-delivered events that folded nothing (``PushResult/duplicate(_:)``).
    public var duplicates = 0
    /// Changes for a collection the source has no resource for, skipped.
    public var unknownCollection = 0
    /// Events whose data was not a usable change message, skipped.
    public var malformed = 0
    /// Events of another type than ``EventSource/Configuration/eventType``, skipped.
    public var otherTypes = 0
    /// Lines the event-stream format says to ignore (``EventStreamParser/ignoredLines``).
    public var ignoredLines = 0
    /// Events dropped for passing the size limit.
    public var oversizedEvents = 0
    /// Failed connection attempts and streams that failed after opening.
    public var connectionFailures = 0

    public init() {}
}
