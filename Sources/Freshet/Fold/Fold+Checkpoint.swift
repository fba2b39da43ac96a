import FreshetLMDB

extension Fold {
    /// The fold of a `checkpoint` record: it restates the state through an earlier LSN, so it
    /// changes no collection; `meta.checkpoint` becomes the larger of its value and the
    /// record's LSN (an older checkpoint kept inside a later one's window never wins).
    static func applyCheckpoint(_ record: LogRecord, state: MaterializedState, in txn: borrowing some FoldTables & ~Copyable) throws {
        if let bytes = try txn.get(state.dbs.meta, key: MetaKey.checkpoint), bytes.count == 8,
           LSN(bytes.reduce(0) { $0 << 8 | UInt64($1) }) >= record.lsn {
            return
        }
        try txn.put(state.dbs.meta, key: MetaKey.checkpoint, value: record.lsn.keyBytes)
    }
}
