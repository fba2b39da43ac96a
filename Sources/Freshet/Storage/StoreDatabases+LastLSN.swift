import FreshetLMDB

extension StoreDatabases {
    /// The last LSN the store has assigned, read inside `txn`: the larger of `meta.lastLSN`
    /// (kept so LSNs are never reused after compaction) and the log's last key.
    ///
    /// Every process that writes the store takes its next LSN from here inside its write
    /// transaction, so two processes never assign the same LSN.
    /// - Throws: ``StoreError/corruptRecord`` when `meta.lastLSN` is not 8 bytes;
    ///   ``LMDBError`` when the store cannot be read.
    func lastLSN(in txn: borrowing Transaction) throws -> LSN {
        var last = LSN.zero
        if let bytes = try txn.get(meta, key: MetaKey.lastLSN) {
            guard bytes.count == 8 else {
                throw StoreError(.corruptRecord, "meta.lastLSN is \(bytes.count) bytes instead of 8")
            }
            last = LSN(bytes.reduce(0) { $0 << 8 | UInt64($1) })
        }
        return max(last, try lastLogKey(in: txn))
    }

    /// The LSN of the log's last record (``LSN/zero`` when the log is empty), read inside `txn`.
    /// - Throws: ``LMDBError`` when the store cannot be read.
    func lastLogKey(in txn: borrowing Transaction) throws -> LSN {
        var last = LSN.zero
        try txn.forEach(log, reverse: true) { key, _ in
            if key.count == 8 { last = LSN(Keys.readUInt64(key, at: 0)) }
            return false
        }
        return last
    }
}
