/// An unresolved mutation as a replay sees it: its proposal's LSN, ID, name, queue and the
/// collections its ops touch, in op order without repeats.
public struct PendingMutationInfo: Sendable, Hashable {
    public var lsn: LSN
    public var id: MutationID
    public var name: String
    public var queue: String
    public var collections: [String]
}
