/// What ``Store/push(_:to:origin:)`` did with a pushed change.
public enum PushResult: Sendable, Hashable {
    /// The change was appended as a `changed` event with this LSN and folded.
    case applied(LSN)
    /// The collection had already folded this event (or a later one) from the same source:
    /// nothing was appended. Carries the collection's cursor for the source.
    case duplicate(PushCursor)
}
