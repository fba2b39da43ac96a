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

    static func applyProposed(_ p: Event.MutationProposed, record: LogRecord, state: MaterializedState, in txn: borrowing some FoldTables & ~Copyable) throws {
        if let existing = try mutationEntry(p.id, state: state, in: txn) {
            throw StoreError(.invalidEvent, "mutation \(p.id) was already proposed (at LSN \(existing.lsn)); a mutation ID is used once", lsn: record.lsn)
        }
        try txn.put(state.dbs.mutations, key: p.id.bytes, value: [MutationState.pending.rawValue] + record.lsn.keyBytes)
        try txn.put(state.dbs.pending, key: record.lsn.keyBytes, value: p.id.bytes)
        try touch(record.event.affectedCollections(primary: record.collection), rowsChanged: true, record: record, state: state, in: txn)
    }

    static func applyConfirmed(_ c: Event.MutationConfirmed, record: LogRecord, state: MaterializedState, in txn: borrowing some FoldTables & ~Copyable) throws {
        let entry = try resolvePending(c.id, as: .confirmed, record: record, state: state, in: txn)
        var deletedIn = Set<String>()
        // Remember what the server confirmed, so a response to a request sent before this
        // confirmation (its basisLSN is older) cannot undo it; see `reapplyConfirmed`.
        for (collection, row) in c.rows {
            try txn.put(state.dbs.confirmed, key: Keys.index(Keys.collection(collection), id: row.id), value: record.lsn.keyBytes + [1])
        }
        if let bytes = try txn.get(state.dbs.log, key: entry.lsn.keyBytes),
           case .mutationProposed(let proposal) = try LogRecord.decode(bytes, expectedLSN: entry.lsn).event {
            for op in proposal.mutation.ops {
                if case .delete(let id) = op.change {
                    deletedIn.insert(op.collection)
                    try state.remove(id: id, prefix: Keys.collection(op.collection), in: txn)
                    try txn.put(state.dbs.confirmed, key: Keys.index(Keys.collection(op.collection), id: id), value: record.lsn.keyBytes + [2])
                }
            }
        }
        for mapping in c.idMappings {
            try txn.put(state.dbs.idMap, key: Keys.index(Keys.collection(mapping.collection), id: mapping.provisionalID), value: Array(mapping.serverID.utf8))
            if mapping.provisionalID != mapping.serverID {
                try state.remove(id: mapping.provisionalID, prefix: Keys.collection(mapping.collection), in: txn)
            }
        }
        var changedBases = Set<String>()
        for (collection, row) in c.rows {
            _ = try upsert(row, state: state, prefix: Keys.collection(collection), in: txn)
            changedBases.insert(collection)
        }
        try touch(record.event.affectedCollections(primary: record.collection), rowsChanged: true, record: record, state: state, in: txn)
        // The stored rows now differ from the representation the validators name: the next
        // request must not be answered 304 for them, so it goes without If-None-Match.
        for collection in changedBases.union(deletedIn) {
            guard var mark = try state.syncMark(collection, in: txn) else { continue }
            mark.etag = nil
            mark.lastModified = nil
            for i in mark.pages.indices {
                mark.pages[i].etag = nil
                mark.pages[i].lastModified = nil
            }
            try state.putSyncMark(mark, collection, in: txn)
        }
        for collection in c.invalidates {
            var mark = try state.syncMark(collection, in: txn) ?? SyncMark()
            mark.invalidatedAt = record.timestamp
            mark.invalidatedLSN = record.lsn
            mark.lastLSN = record.lsn
            try state.putSyncMark(mark, collection, in: txn)
        }
    }

    static func applyRolledBack(_ r: Event.MutationRolledBack, record: LogRecord, state: MaterializedState, in txn: borrowing some FoldTables & ~Copyable) throws {
        let entry = try resolvePending(r.id, as: .rolledBack, record: record, state: state, in: txn)
        // A row this mutation would have created never exists: mutations that refer to its
        // provisional ID must roll back too (an empty server ID marks that).
        // Only a create's provisional ID gets the mark: an edit's ID names a row the server has.
        if let bytes = try txn.get(state.dbs.log, key: entry.lsn.keyBytes),
           case .mutationProposed(let proposal) = try LogRecord.decode(bytes, expectedLSN: entry.lsn).event,
           case .responseRow(let collection, let provisionalID, _) = proposal.mutation.confirmation,
           try state.position(of: provisionalID, prefix: Keys.collection(collection), in: txn) == nil,
           try txn.get(state.dbs.idMap, key: Keys.index(Keys.collection(collection), id: provisionalID)) == nil {
            try txn.put(state.dbs.idMap, key: Keys.index(Keys.collection(collection), id: provisionalID), value: [])
        }
        try touch(record.event.affectedCollections(primary: record.collection), rowsChanged: true, record: record, state: state, in: txn)
    }

    /// After a fetch replaced rows, puts back what mutations confirmed after the request left
    /// (`basis`): a confirmed row the response lacks or holds at an older version is kept as
    /// confirmed, a confirmed delete stays deleted.
    /// A response for the whole collection (`prune`) answers every older confirmation, so
    /// their entries go. Returns whether rows changed.
    static func reapplyConfirmed(after basis: LSN?, collection: String, prune: Bool, preserved: [Row], state: MaterializedState, in txn: borrowing some FoldTables & ~Copyable) throws -> Bool {
        guard let basis else { return false }
        let prefix = Keys.collection(collection)
        var changed = false
        var stale: [[UInt8]] = []
        var later: [(id: String, op: UInt8)] = []
        try txn.forEach(state.dbs.confirmed, from: prefix) { key, value in
            guard key.starts(with: prefix) else { return false }
            guard value.count == 9 else { return true }
            let lsn = LSN(Keys.readUInt64(value, at: 0))
            if lsn > basis {
                later.append((String(decoding: key.dropFirst(prefix.count), as: UTF8.self), value[8]))
            } else if prune {
                stale.append(Array(key))
            }
            return true
        }
        for key in stale { try txn.delete(state.dbs.confirmed, key: key) }
        for (id, op) in later {
            let present = try state.position(of: id, prefix: prefix, in: txn) != nil
            if op == 1, let row = preserved.first(where: { $0.id == id }) {
                // Missing from the response, or in it at an older version: the confirmation is newer.
                if try upsert(row, state: state, prefix: prefix, in: txn) { changed = true }
            } else if op == 2, present {
                try state.remove(id: id, prefix: prefix, in: txn)
                changed = true
            }
        }
        return changed
    }

    /// The rows a later confirmation wrote, read before a fetch replaces them.
    static func confirmedRows(after basis: LSN?, collection: String, state: MaterializedState, in txn: borrowing some FoldTables & ~Copyable) throws -> [Row] {
        guard let basis else { return [] }
        let prefix = Keys.collection(collection)
        var ids: [String] = []
        try txn.forEach(state.dbs.confirmed, from: prefix) { key, value in
            guard key.starts(with: prefix) else { return false }
            if value.count == 9, value[8] == 1, LSN(Keys.readUInt64(value, at: 0)) > basis {
                ids.append(String(decoding: key.dropFirst(prefix.count), as: UTF8.self))
            }
            return true
        }
        var rows: [Row] = []
        for id in ids {
            if let position = try state.position(of: id, prefix: prefix, in: txn), let value = try state.value(at: position, prefix: prefix, in: txn) {
                rows.append(try value.withUnsafeBytes { try MaterializedState.decodeRow($0) })
            }
        }
        return rows
    }

    /// The state and proposal LSN of a mutation, or nil when it was never proposed.
    static func mutationEntry(_ id: MutationID, state: MaterializedState, in txn: borrowing some FoldTables & ~Copyable) throws -> (state: MutationState, lsn: LSN)? {
        guard let bytes = try txn.get(state.dbs.mutations, key: id.bytes) else { return nil }
        guard bytes.count == 9, let s = MutationState(rawValue: bytes[0]) else {
            throw StoreError(.corruptRecord, "mutation \(id) has a malformed state entry")
        }
        return (s, LSN(bytes[1...].reduce(0) { $0 << 8 | UInt64($1) }))
    }

    private static func resolvePending(_ id: MutationID, as outcome: MutationState, record: LogRecord, state: MaterializedState, in txn: borrowing some FoldTables & ~Copyable) throws -> (state: MutationState, lsn: LSN) {
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
    private static func touch(_ collections: [String], rowsChanged: Bool, record: LogRecord, state: MaterializedState, in txn: borrowing some FoldTables & ~Copyable) throws {
        for collection in collections {
            var mark = try state.syncMark(collection, in: txn) ?? SyncMark()
            mark.lastLSN = record.lsn
            if rowsChanged { mark.rowsLSN = record.lsn }
            try state.putSyncMark(mark, collection, in: txn)
        }
    }
}
