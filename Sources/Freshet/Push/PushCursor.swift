/// How far a collection has folded one push source's stream: the ID of the last event from
/// that source folded into it, and that event's LSN. Kept in the collection's ``SyncMark``
/// (``SyncMark/pushCursors``), written by the fold in the same transaction as the rows, so it
/// is as durable as they are and replay rebuilds it.
public struct PushCursor: Sendable, Hashable {
    /// The push source's name (``PushOrigin/source``).
    public var source: String
    /// The last folded event's ID (``PushOrigin/eventID``): what a Server-Sent Events client
    /// sends as `Last-Event-ID` when it reconnects.
    public var eventID: String
    /// The LSN of that `changed` event.
    public var lsn: LSN

    public init(source: String, eventID: String, lsn: LSN) {
        self.source = source
        self.eventID = eventID
        self.lsn = lsn
    }
}
