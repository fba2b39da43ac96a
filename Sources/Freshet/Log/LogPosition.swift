import FreshetLMDB

/// Which LSN one entry of the log stands for, read from its 8-byte key and its value: the one
/// reading of a log key that every log walk shares (`dump`, `stats`, `export`, `replay`,
/// `why`, `verify`, `compact`, and the end of the log the tools read, ``StoreDatabases/logEnd(in:)``).
///
/// A record carries its own LSN (bytes 4 ..< 12, docs/log-format.md §2) under its CRC-32C.
/// When the key says one LSN and the record, its CRC intact, says another, the key is what is
/// damaged (one flipped byte turned LSN 6's key into 4278190086, trial 16 finding 2): the
/// entry stands for the record's LSN, where a cursor walk meets it, among its neighbours.
/// Taken at its key, it looked like the end of the log (a key past the last LSN) and every
/// tool but `dump` stopped there, leaving the intact records after it out without a word.
/// The entry is still unreadable (``damagedKeyProblem``): its record is not folded or
/// exported, and `verify`, `dump`, `stats`, `export`, `replay` and `why` report it (exit 1).
///
/// Costs one 8-byte comparison per record; the CRC is computed only when the two differ.
struct LogPosition {
    /// The LSN the entry stands for: its key's, or the LSN its intact record says it is.
    let lsn: LSN
    /// The key as stored when it is damaged (not the LSN of the intact record under it).
    let damagedKey: LSN?

    /// - Parameters:
    ///   - key: an 8-byte key of the log.
    ///   - value: the bytes stored under it.
    init(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let keyLSN = LSN(Keys.readUInt64(key, at: 0))
        if let own = Self.recordLSN(value), own != keyLSN, Self.crcHolds(value) {
            lsn = own
            damagedKey = keyLSN
        } else {
            lsn = keyLSN
            damagedKey = nil
        }
    }

    /// The LSN a record says it is (nil: too short or of another format version to say; no
    /// evidence against its key). Believed only when its CRC-32C holds (``crcHolds(_:)``).
    private static func recordLSN(_ value: UnsafeRawBufferPointer) -> LSN? {
        guard value.count >= LogRecord.overhead, value[0] == LogRecord.formatVersion else { return nil }
        return LSN(UInt64(bigEndian: value.loadUnaligned(fromByteOffset: 4, as: UInt64.self)))
    }

    /// Whether `value`'s CRC-32C holds.
    private static func crcHolds(_ value: UnsafeRawBufferPointer) -> Bool {
        let stored = UInt32(bigEndian: value.loadUnaligned(fromByteOffset: value.count - 4, as: UInt32.self))
        return CRC32C.checksum(UnsafeRawBufferPointer(rebasing: value[0..<value.count - 4])) == stored
    }

    /// What every tool says of a damaged key: database `log`, the LSN of the record under it,
    /// and the key as stored: `log · LSN 6: its key is damaged: it reads 4278190086, the record
    /// stored under it (CRC-32C intact) is LSN 6; the record is skipped`. Nil for a sound key.
    var damagedKeyProblem: StoreProblem? {
        damagedKey.map { StoreProblem(database: "log", lsn: lsn, message: Self.message(lsn: lsn, key: $0)) }
    }

    /// The same as a ``StoreError`` (``StoreError/Code/corruptRecord``), for ``LogEntry/unreadable(lsn:error:)``.
    var damagedKeyError: StoreError? {
        damagedKey.map { StoreError(.corruptRecord, Self.message(lsn: lsn, key: $0), lsn: lsn) }
    }

    private static func message(lsn: LSN, key: LSN) -> String {
        "its key is damaged: it reads \(key), the record stored under it (CRC-32C intact) is LSN \(lsn); the record is skipped"
    }
}
