import FreshetLMDB

extension StoreDatabases {
    /// Writes a checkpoint's entries into these (empty) databases and derives `rowIndex` from
    /// `rows` (docs/log-format.md §6.12): for a `rows` entry with key `collection key ‖ position`
    /// and value `ID length ‖ ID ‖ JSON`, `rowIndex` gets key `collection key ‖ ID` and value
    /// `position`. Used by replay (the scratch store) and by `freshet import`.
    ///
    /// - Throws: ``StoreError/Code/corruptRecord`` for a `rows` entry whose key is too short
    ///   or whose value has no readable row ID; LMDB errors from the writes.
    func load(_ checkpoint: Event.Checkpoint, in txn: borrowing some FoldTables & ~Copyable) throws {
        for entry in checkpoint.entries {
            switch entry.table {
            case .rows:
                guard entry.key.count > 10 else {
                    throw StoreError(.corruptRecord, "checkpoint row key of \(entry.key.count) bytes is too short", lsn: checkpoint.throughLSN)
                }
                try txn.put(rows, key: entry.key, value: entry.value)
                let prefix = Array(entry.key[0..<(entry.key.count - 8)])
                let id = try entry.value.withUnsafeBytes { try MaterializedState.decodeRowID($0) }
                try txn.put(rowIndex, key: Keys.index(prefix, id: id), value: Array(entry.key[(entry.key.count - 8)...]))
            case .marks: try txn.put(marks, key: entry.key, value: entry.value)
            case .pending: try txn.put(pending, key: entry.key, value: entry.value)
            case .mutations: try txn.put(mutations, key: entry.key, value: entry.value)
            case .idMap: try txn.put(idMap, key: entry.key, value: entry.value)
            case .confirmed: try txn.put(confirmed, key: entry.key, value: entry.value)
            }
        }
    }
}
