import Foundation
import FreshetLMDB

extension Store {
    /// Recovers from a damaged store, for an app whose ``Store/init(directory:configuration:dependencies:create:)``
    /// threw ``StoreError/corrupted``: moves `directory` aside to
    /// `<directory>.damaged-<yyyyMMdd-HHmmss>` (a `-2`, `-3` … suffix when taken; nothing in it
    /// is changed), opens a new empty store in `directory`, and carries over what exists
    /// nowhere else, read from the readable part of the old log:
    ///
    /// 1. **LSNs continue**: the new log starts with a `checkpoint` record (docs/log-format.md
    ///    §6.11) through the last LSN the old store assigned (its `meta.lastLSN`, or its
    ///    highest readable record), with no entries, so LSNs never go backwards for exports,
    ///    other processes and tools, and `verify`/`replay` start from it as after a compaction
    ///    (asking for an earlier LSN is ``ToolError/beforeCheckpoint``).
    /// 2. **Local-only rows**: each collection written by `localWrite` and never fetched gets
    ///    its rows back, as the readable log folds them (from its latest checkpoint), in one
    ///    `localWrite` of upserts in the collection's order.
    /// 3. **Unresolved mutations**: proposed again with their mutation IDs, in LSN order.
    ///
    /// Steps 2 and 3 are one transaction. Fetched rows are not carried over: they are a cache,
    /// and the next refresh fetches them.
    ///
    /// The old log is read with ``DataFile/records(inDatabase:)`` (plain `pread`, every page
    /// checked, damaged pages skipped), never by mapping the damaged file; each record must
    /// pass its CRC-32C. A mutation whose confirmation or rollback sat on a lost page is
    /// proposed again; the server recognises it by its idempotency key. A local write on a
    /// lost page is missing from its collection (``DamagedStoreRecovery/unreadableRecords``
    /// says how many records were lost).
    ///
    /// Call it only after opening failed and with no other process using the directory.
    /// - Returns: the new store and what was done.
    /// - Throws: ``StoreError/notAStore`` when `directory` does not exist;
    ///   ``StoreError/permissionDenied`` or ``StoreError/storage`` when it cannot be moved;
    ///   whatever opening or appending to the new store throws (the damaged directory stays
    ///   moved aside, and the new directory as that failure left it).
    public static func recoverDamaged(directory: URL, configuration: Configuration = Configuration(), dependencies: Dependencies = .live) async throws(StoreError) -> (store: Store, recovery: DamagedStoreRecovery) {
        let path = directory.standardizedFileURL.path
        guard try StoreFiles.identity(of: path) != nil else { throw StoreError(.notAStore, "\(path) does not exist") }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        let base = path + ".damaged-" + formatter.string(from: dependencies.now())
        var target = base
        var suffix = 1
        while try StoreFiles.identity(of: target) != nil {
            suffix += 1
            target = base + "-\(suffix)"
        }
        guard rename(path, target) == 0 else { throw StoreFiles.error(errno, "cannot move \(path) to \(target)") }
        let dataPath = target + "/data.mdb"
        let found = try DamagedLog(dataPath: dataPath)
        let store = try Store(directory: URL(fileURLWithPath: path), configuration: configuration, dependencies: dependencies)
        if found.lastLSN > .zero {
            try store.startLog(after: found.lastLSN, time: found.lastTime ?? dependencies.now(), carried: found.readable)
        }
        var events: [(collection: String, event: Event)] = []
        for (collection, rows) in found.localRows.sorted(by: { $0.key < $1.key }) {
            events.append((collection, .localWrite(Event.RowChanges(rows.map { .upsert($0) }))))
        }
        events += found.proposals.map { (collection: $0.collection, event: Event.mutationProposed($0.proposal)) }
        if !events.isEmpty {
            try await store.append(events)
            if store.sendsMutations {
                for queue in Set(found.proposals.map(\.proposal.mutation.queue)) { store.mutationQueue.kick(queue) }
            }
        }
        let recovery = DamagedStoreRecovery(damagedCopy: URL(fileURLWithPath: target), recoveredMutations: found.proposals.map(\.proposal.id),
                                            recoveredLocalRows: found.localRows.mapValues(\.count), continuedAfter: found.lastLSN,
                                            readableRecords: found.readable, unreadableRecords: found.unreadable, damagedPages: found.damagedPages)
        return (store, recovery)
    }

    /// Starts a new, empty store's log after `last`: appends a `checkpoint` record through
    /// `last` (stamped `time`) with no entries and no kept records, and sets `meta.lastLSN`,
    /// in one write transaction; the next append gets `last + 2`. `carried` is the record's
    /// `removedCount` (for people: how many records the old log had that this one does not).
    /// Used by ``recoverDamaged(directory:configuration:dependencies:)`` and sign-out, so LSNs
    /// never go backwards and `verify` sees no gap before the first new record.
    func startLog(after last: LSN, time: Date, carried: Int) throws(StoreError) {
        do {
            try withMapGrowth {
                try env.write { txn in
                    let stored = try state.dbs.lastLSN(in: txn)
                    guard stored == .zero || stored == last, try txn.count(state.dbs.log) == 0 else {
                        throw StoreError(.storage, "\(env.path) is not a new store (last LSN \(stored)); its log cannot start after LSN \(last)")
                    }
                    guard let lsn = last.successor else {
                        throw StoreError(.logExhausted, "the log of \(env.path) would start after LSN \(last), the last one", lsn: last)
                    }
                    let checkpoint = Event.Checkpoint(throughLSN: last, throughTime: time, keptLSNs: [], removedCount: carried, entries: [])
                    let record = LogRecord(lsn: lsn, timestamp: dependencies.now(), collection: "", event: .checkpoint(checkpoint))
                    try txn.put(state.dbs.log, key: lsn.keyBytes, value: record.checkedEncoding(), append: true)
                    try Fold.apply(record, to: state, in: txn)
                    try txn.put(state.dbs.meta, key: MetaKey.lastLSN, value: lsn.keyBytes)
                }
            }
            // The writer takes its next LSN from the store.
            _ = try writer.checkForExternalChanges()
        } catch {
            throw StoreError(error, doing: "starting the log of \(env.path) after LSN \(last)")
        }
    }
}
