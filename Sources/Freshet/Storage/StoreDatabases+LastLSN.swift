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
        max(try metaLastLSN(in: txn), try lastLogKey(in: txn))
    }

    /// `meta.lastLSN` (``LSN/zero`` when absent).
    private func metaLastLSN(in txn: borrowing Transaction) throws -> LSN {
        guard let bytes = try txn.get(meta, key: MetaKey.lastLSN) else { return .zero }
        guard bytes.count == 8 else {
            throw StoreError(.corruptRecord, "meta.lastLSN is \(bytes.count) bytes instead of 8")
        }
        return LSN(bytes.reduce(0) { $0 << 8 | UInt64($1) })
    }

    /// The end of the log as the tools read it, inside `txn`: the LSN the log's last entry
    /// stands for (``LogPosition``: the LSN its intact record says it is when its key is
    /// damaged) and the last LSN the store has assigned (the larger of `meta.lastLSN` and
    /// that LSN). ``lastLSN(in:)`` takes the last key as stored instead: a writer appends
    /// after it (`MDB_APPEND`), whatever it reads.
    /// - Throws: as ``lastLSN(in:)``.
    func logEnd(in txn: borrowing Transaction) throws -> (last: LSN, assigned: LSN) {
        var last = LSN.zero
        try txn.forEach(log, reverse: true) { key, value in
            if key.count == 8 { last = LogPosition(key: key, value: value).lsn }
            return false
        }
        return (last, max(try metaLastLSN(in: txn), last))
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
