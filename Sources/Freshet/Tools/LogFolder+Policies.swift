import Foundation

extension LogFolder {
    /// Each collection's read policy in force after the records folded: the last one a
    /// `fetched`, `notModified` or `fetchFailed` record (or the checkpoint started from)
    /// recorded, for every collection whose SyncMark still records a fetch attempt.
    ///
    /// An `evicted` record that took effect removes the collection's mark (docs/log-format.md
    /// §10.8) and with it the policy: the collection reads as one no event touched, its next
    /// observe refetches under its own policy, and a checkpoint written after the eviction
    /// carries no policy of a collection it holds nothing of. An eviction the fold skipped (an
    /// unresolved mutation names the collection) keeps the mark, so the policy stays. Every
    /// refresh record sets the mark's `lastAttemptAt`, so a mark without a fetch attempt is one
    /// that started again after an eviction.
    func policies() throws -> [String: (lsn: LSN, policy: ReadPolicy)] {
        var inForce = recordedPolicies
        for name in recordedPolicies.keys {
            if try scratch.state.syncMark(name, in: scratch.tables)?.wasFetched != true { inForce[name] = nil }
        }
        return inForce
    }
}
