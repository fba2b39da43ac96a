import Foundation
import FreshetLMDB

/// The fold of mutation events. Pending mutations are not copied anywhere: `pending` holds
/// only the LSN of each unresolved proposal, and the overlay is read from the log itself.
extension Fold {
    enum MutationState: UInt8 {
        case pending = 1
        case confirmed = 2
        case rolledBack = 3
    }

    static func applyProposed(_ p: Event.MutationProposed, record: LogRecord, state: MaterializedState, in txn: borrowing Transaction) throws {
        if let existing = try mutationEntry(p.id, state: state, in: txn) {
            throw StoreError(.invalidEvent, "mutation \(p.id) was already proposed (at LSN \(existing.lsn)); a mutation ID is used once", lsn: record.lsn)
        }
        try txn.put(state.dbs.mutations, key: p.id.bytes, value: [MutationState.pending.rawValue] + record.lsn.keyBytes)
        try txn.put(state.dbs.pending, key: record.lsn.keyBytes, value: p.id.bytes)
        try touch(record.event.affectedCollections(primary: record.collection), rowsChanged: true, record: record, state: state, in: txn)
    }

    static func applyConfirmed(_ c: Event.MutationConfirmed, record: LogRecord, state: MaterializedState, in txn: borrowing Transaction) throws {
        let entry = try resolvePending(c.id, as: .confirmed, record: record, state: state, in: txn)
        _ = entry
        for mapping in c.idMappings {
            try txn.put(state.dbs.idMap, key: Keys.index(Keys.collection(mapping.collection), id: mapping.provisionalID), value: Array(mapping.serverID.utf8))
            if mapping.provisionalID != mapping.serverID {
                try state.remove(id: mapping.provisionalID, prefix: Keys.collection(mapping.collection), in: txn)
            }
        }
        for (collection, row) in c.rows {
            _ = try upsert(row, state: state, prefix: Keys.collection(collection), in: txn)
        }
        try touch(record.event.affectedCollections(primary: record.collection), rowsChanged: true, record: record, state: state, in: txn)
        for collection in c.invalidates {
            var mark = try state.syncMark(collection, in: txn) ?? SyncMark()
            mark.invalidatedAt = record.timestamp
            mark.invalidatedLSN = record.lsn
            mark.lastLSN = record.lsn
            try state.putSyncMark(mark, collection, in: txn)
        }
    }

    static func applyRolledBack(_ r: Event.MutationRolledBack, record: LogRecord, state: MaterializedState, in txn: borrowing Transaction) throws {
        let entry = try resolvePending(r.id, as: .rolledBack, record: record, state: state, in: txn)
        // A row this mutation would have created never exists: mutations that refer to its
        // provisional ID must roll back too (an empty server ID marks that).
        if let bytes = try txn.get(state.dbs.log, key: entry.lsn.keyBytes),
           case .mutationProposed(let proposal) = try LogRecord.decode(bytes, expectedLSN: entry.lsn).event,
           case .responseRow(let collection, let provisionalID, _) = proposal.mutation.confirmation {
            try txn.put(state.dbs.idMap, key: Keys.index(Keys.collection(collection), id: provisionalID), value: [])
        }
        try touch(record.event.affectedCollections(primary: record.collection), rowsChanged: true, record: record, state: state, in: txn)
    }

    /// The state and proposal LSN of a mutation, or nil when it was never proposed.
    static func mutationEntry(_ id: MutationID, state: MaterializedState, in txn: borrowing Transaction) throws -> (state: MutationState, lsn: LSN)? {
        guard let bytes = try txn.get(state.dbs.mutations, key: id.bytes) else { return nil }
        guard bytes.count == 9, let s = MutationState(rawValue: bytes[0]) else {
            throw StoreError(.corruptRecord, "mutation \(id) has a malformed state entry")
        }
        return (s, LSN(bytes[1...].reduce(0) { $0 << 8 | UInt64($1) }))
    }

    private static func resolvePending(_ id: MutationID, as outcome: MutationState, record: LogRecord, state: MaterializedState, in txn: borrowing Transaction) throws -> (state: MutationState, lsn: LSN) {
        guard let entry = try mutationEntry(id, state: state, in: txn) else {
            throw StoreError(.invalidEvent, "\(record.kind.name) for mutation \(id), which was never proposed", lsn: record.lsn)
        }
        guard entry.state == .pending else {
            throw StoreError(.invalidEvent, "\(record.kind.name) for mutation \(id), which is already \(entry.state == .confirmed ? "confirmed" : "rolled back")", lsn: record.lsn)
        }
        try txn.delete(state.dbs.pending, key: entry.lsn.keyBytes)
        try txn.put(state.dbs.mutations, key: id.bytes, value: [outcome.rawValue] + entry.lsn.keyBytes)
        return entry
    }

    /// Moves each collection's `lastLSN` (and `rowsLSN`: the projection changed) to this record.
    private static func touch(_ collections: [String], rowsChanged: Bool, record: LogRecord, state: MaterializedState, in txn: borrowing Transaction) throws {
        for collection in collections {
            var mark = try state.syncMark(collection, in: txn) ?? SyncMark()
            mark.lastLSN = record.lsn
            if rowsChanged { mark.rowsLSN = record.lsn }
            try state.putSyncMark(mark, collection, in: txn)
        }
    }
}
