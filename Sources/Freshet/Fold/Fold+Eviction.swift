import FreshetLMDB

/// The fold of `evicted` records (garbage collection of unobserved keys; docs/log-format.md
/// §10.8): the collection's rows and SyncMark go, so the store holds nothing of it and the
/// next observe starts from `empty` and refetches. The log keeps its history until compaction.
extension Fold {
    /// Removes the collection's rows (with their `rowIndex` entries) and its SyncMark — unless
    /// the collection was never fetched (its mark records no fetch attempt: a local-only
    /// collection, whose rows exist nowhere else) or an unresolved mutation names it (its
    /// overlay and confirmation need the base). Then the record changes nothing: the collector
    /// checks both before it appends, so that happens only when a mutation was proposed, or
    /// the collection fetched, between its check and its commit (or by another process).
    /// `idMap` and `confirmed` entries are kept: they are bounded by mutations, not by keys.
    static func applyEvicted(_ record: LogRecord, state: MaterializedState, in txn: borrowing some FoldTables & ~Copyable) throws {
        let collection = record.collection
        guard let mark = try state.syncMark(collection, in: txn), mark.wasFetched else { return }
        if try collectionsNamedByPendingMutations(state: state, in: txn).contains(collection) { return }
        try state.removePositions(from: 0, to: nil, prefix: Keys.collection(collection), in: txn)
        try state.removeSyncMark(collection, in: txn)
    }

    /// Every collection an unresolved mutation names: its record's collection, its ops'
    /// collections and the collection its confirmation writes the server's row to. Read from
    /// `pending` and the proposals in `log`.
    /// - Throws: ``StoreError/corruptRecord`` when a pending entry's proposal is missing or
    ///   is not a `mutationProposed` record.
    static func collectionsNamedByPendingMutations(state: MaterializedState, in txn: borrowing some FoldTables & ~Copyable) throws -> Set<String> {
        var lsns: [LSN] = []
        try txn.forEach(state.dbs.pending) { key, _ in
            if key.count == 8 { lsns.append(LSN(Keys.readUInt64(key, at: 0))) }
            return true
        }
        var names = Set<String>()
        for lsn in lsns {
            guard let bytes = try txn.get(state.dbs.log, key: lsn.keyBytes) else {
                throw StoreError(.corruptRecord, "pending mutation at LSN \(lsn) is missing from the log", lsn: lsn)
            }
            let proposal = try LogRecord.decode(bytes, expectedLSN: lsn)
            guard case .mutationProposed(let p) = proposal.event else {
                throw StoreError(.corruptRecord, "pending entry at LSN \(lsn) is not a mutationProposed record", lsn: lsn)
            }
            names.formUnion(proposal.event.affectedCollections(primary: proposal.collection))
            if case .responseRow(let collection, _, _) = p.mutation.confirmation { names.insert(collection) }
        }
        return names
    }
}
