import FreshetLMDB
import Synchronization

/// The pending overlay (the Replicache model): the projection of a collection is its
/// confirmed base rows with every unresolved mutation's ops applied on top, in LSN order.
/// Proposals are read from the log (not from a second copy that could drift) and cached by
/// LSN, since a logged proposal never changes.
final class PendingOverlay: Sendable {
    private let cache = Mutex<[LSN: Event.MutationProposed]>([:])

    /// The unresolved proposals in LSN order.
    func pending(state: MaterializedState, in txn: borrowing some FoldTables & ~Copyable) throws -> [(lsn: LSN, proposal: Event.MutationProposed)] {
        var lsns: [(lsn: LSN, id: [UInt8])] = []
        try txn.forEach(state.dbs.pending) { key, value in
            if key.count == 8 { lsns.append((LSN(Keys.readUInt64(key, at: 0)), Array(value))) }
            return true
        }
        var result: [(LSN, Event.MutationProposed)] = []
        for (lsn, id) in lsns {
            // Checked against the transaction: a cached proposal counts only while the store
            // still names the same mutation at that LSN (another process writes it too).
            if let cached = cache.withLock({ $0[lsn] }), cached.id.bytes == id {
                result.append((lsn, cached))
                continue
            }
            guard let bytes = try txn.get(state.dbs.log, key: lsn.keyBytes) else {
                throw StoreError(.corruptRecord, "pending mutation at LSN \(lsn) is missing from the log", lsn: lsn)
            }
            guard case .mutationProposed(let proposal) = try LogRecord.decode(bytes, expectedLSN: lsn).event else {
                throw StoreError(.corruptRecord, "pending entry at LSN \(lsn) is not a mutationProposed record", lsn: lsn)
            }
            cache.withLock { c in
                if c.count > 4096 { c.removeAll() }
                c[lsn] = proposal
            }
            result.append((lsn, proposal))
        }
        return result
    }

    /// `base` with the pending ops on `collection` applied; the IDs of the mutations that touched it.
    func apply(to base: [Row], collection: String, state: MaterializedState, in txn: borrowing some FoldTables & ~Copyable) throws -> (rows: [Row], mutations: [MutationID]) {
        let pending = try pending(state: state, in: txn)
        guard !pending.isEmpty else { return (base, []) }
        var rows = base
        var touched: [MutationID] = []
        let prefix = Keys.collection(collection)
        for (_, proposal) in pending {
            let ops = proposal.mutation.ops.filter { $0.collection == collection }
            guard !ops.isEmpty else { continue }
            touched.append(proposal.id)
            for op in ops {
                // A provisional ID whose creating mutation is confirmed now names the server's row.
                var target = op.rowID
                if let mapped = try txn.get(state.dbs.idMap, key: Keys.index(prefix, id: op.rowID)), !mapped.isEmpty {
                    target = String(decoding: mapped, as: UTF8.self)
                }
                switch op.change {
                case .upsert(let row):
                    let shown = Row(id: target, json: row.json)
                    if let i = rows.firstIndex(where: { $0.id == target }) { rows[i] = shown } else { rows.append(shown) }
                case .delete:
                    rows.removeAll { $0.id == target }
                }
            }
        }
        return (rows, touched)
    }
}
