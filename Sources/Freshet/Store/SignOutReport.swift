/// What ``Store/signOut(force:)`` erased.
public struct SignOutReport: Sendable, Hashable {
    /// Log records erased (every event: fetches, local writes, mutations).
    public var erasedEvents: Int
    /// Collections whose rows and SyncMarks were erased.
    public var erasedCollections: [String]
    /// Unresolved mutations discarded (only with `force: true`; they were never sent).
    public var discardedMutations: [MutationID]

    public init(erasedEvents: Int, erasedCollections: [String], discardedMutations: [MutationID]) {
        self.erasedEvents = erasedEvents
        self.erasedCollections = erasedCollections
        self.discardedMutations = discardedMutations
    }
}
