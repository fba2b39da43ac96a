import FreshetLMDB

extension StoreDatabases {
    /// The latest checkpoint, read inside `txn`: the record `meta.checkpoint` names, or nil
    /// when the log was never compacted.
    /// - Throws: ``StoreError/corruptRecord`` when `meta.checkpoint` is not 8 bytes, names a
    ///   missing record or one that is not a checkpoint; the record's own decoding errors
    ///   (``StoreError/checksumMismatch`` …): without its checkpoint a compacted log cannot be
    ///   replayed.
    func latestCheckpoint(in txn: borrowing Transaction) throws -> (record: LogRecord, checkpoint: Event.Checkpoint)? {
        guard let bytes = try txn.get(meta, key: MetaKey.checkpoint) else { return nil }
        guard bytes.count == 8 else {
            throw StoreError(.corruptRecord, "meta.checkpoint is \(bytes.count) bytes instead of 8")
        }
        let lsn = LSN(bytes.reduce(0) { $0 << 8 | UInt64($1) })
        guard let recordBytes = try txn.get(log, key: lsn.keyBytes) else {
            throw StoreError(.corruptRecord, "meta.checkpoint names LSN \(lsn), which is not in the log", lsn: lsn)
        }
        let record = try LogRecord.decode(recordBytes, expectedLSN: lsn)
        guard case .checkpoint(let checkpoint) = record.event else {
            throw StoreError(.corruptRecord, "meta.checkpoint names LSN \(lsn), a \(record.kind.name) record, not a checkpoint", lsn: lsn)
        }
        guard checkpoint.throughLSN < lsn else {
            throw StoreError(.corruptRecord, "the checkpoint at LSN \(lsn) claims state through LSN \(checkpoint.throughLSN), not before itself", lsn: lsn)
        }
        return (record, checkpoint)
    }
}
