/// One event dispatched by an event stream (WHATWG HTML §9.2.6, "dispatch the event").
public struct ServerSentEvent: Sendable, Hashable {
    /// The `event` field's value, or `"message"` when the event had none.
    public var type: String
    /// The `data` lines joined with LF (the last LF removed), decoded as UTF-8 with invalid
    /// sequences replaced by U+FFFD.
    public var data: String
    /// The stream's last event ID when the event was dispatched: the value of the latest `id`
    /// field so far (in this event or an earlier one), `""` when none was seen or the latest
    /// was empty. This is what a reconnection sends as `Last-Event-ID`.
    public var lastEventID: String

    public init(type: String = "message", data: String, lastEventID: String = "") {
        self.type = type
        self.data = data
        self.lastEventID = lastEventID
    }
}
