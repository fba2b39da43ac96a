import Foundation
import FreshetLMDB

extension ScratchState {
    /// Writes a checkpoint's entries into the (empty) scratch tables, derives `rowIndex`
    /// from `rows` (docs/log-format.md §6.11), and puts the kept records into the scratch log
    /// (the fold reads proposals back from it); on failure nothing stays.
    func load(_ checkpoint: Event.Checkpoint, keptRecords: [(LSN, [UInt8])]) throws(StoreError) {
        tables.begin()
        do {
            let dbs = state.dbs
            try dbs.load(checkpoint, in: tables)
            for (lsn, bytes) in keptRecords {
                try tables.put(dbs.log, key: lsn.keyBytes, value: bytes)
            }
            try tables.put(dbs.meta, key: MetaKey.lastLSN, value: checkpoint.throughLSN.keyBytes)
        } catch {
            tables.rollback()
            throw StoreError(error, doing: "loading the checkpoint through LSN \(checkpoint.throughLSN) into the scratch state")
        }
        tables.commit()
    }

    /// The scratch state as checkpoint entries (every table, keys ascending) and the LSNs of
    /// the proposals pending in it.
    func checkpointEntries() throws(StoreError) -> (entries: [Event.Checkpoint.Entry], pending: [LSN]) {
        do {
            var entries: [Event.Checkpoint.Entry] = []
            var pending: [LSN] = []
            let dbs = state.dbs
            for table in Event.Checkpoint.Table.allCases {
                let db = switch table {
                case .rows: dbs.rows
                case .marks: dbs.marks
                case .pending: dbs.pending
                case .mutations: dbs.mutations
                case .idMap: dbs.idMap
                case .confirmed: dbs.confirmed
                }
                try tables.forEach(db) { key, value in
                    entries.append(Event.Checkpoint.Entry(table: table, key: Array(key), value: Array(value)))
                    if table == .pending, key.count == 8 { pending.append(LSN(Keys.readUInt64(key, at: 0))) }
                    return true
                }
            }
            return (entries, pending)
        } catch {
            throw StoreError(error, doing: "reading the scratch state for a checkpoint")
        }
    }
}
