import Foundation

extension Store {
    /// The latest checkpoint of a compacted log (`meta.checkpoint`, docs/log-format.md §6.12),
    /// or nil when the log was never compacted: one short read transaction.
    /// - Throws: ``StoreError/closed`` after ``close()``; ``StoreError/corruptRecord`` when
    ///   `meta.checkpoint` names a record that is not a readable checkpoint.
    public func latestCheckpoint() throws(StoreError) -> CheckpointInfo? {
        try checkOpen()
        do {
            return try env.read { txn -> CheckpointInfo? in
                guard let (record, checkpoint) = try state.dbs.latestCheckpoint(in: txn) else { return nil }
                return CheckpointInfo(lsn: record.lsn, throughLSN: checkpoint.throughLSN, throughTime: checkpoint.throughTime, writtenAt: record.timestamp,
                                      keptLSNs: checkpoint.keptLSNs, removedCount: checkpoint.removedCount)
            }
        } catch {
            throw StoreError(error, doing: "reading the checkpoint of \(displayPath)")
        }
    }
}
