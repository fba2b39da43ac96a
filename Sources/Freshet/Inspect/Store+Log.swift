import Foundation
import FreshetLMDB

/// One entry met while reading the log: a record, or the error that made it unreadable.
/// An unreadable record never stops a reader: tools report it and go on.
public enum LogEntry: Sendable {
    case record(LogRecord)
    /// The bytes stored under `lsn` could not be decoded (checksum, unknown kind, truncation).
    case unreadable(lsn: LSN, error: StoreError)

    public var lsn: LSN {
        switch self {
        case .record(let r): r.lsn
        case .unreadable(let lsn, _): lsn
        }
    }
}

extension Store {
    /// Reads the log in LSN order, from `from` through `to` (both inclusive; nil: to the end),
    /// optionally only one collection's records, handing each entry to `body` until it
    /// returns false. Runs in one read transaction: it sees one consistent log.
    ///
    /// - Throws: ``StoreError/closed``, ``StoreError/storage``, or what `body` throws.
    public func readLog(from: LSN = LSN(1), to: LSN? = nil, collection: String? = nil, _ body: (LogEntry) throws -> Bool) throws {
        try checkOpen()
        do {
            try env.read { txn in
                try txn.forEach(state.dbs.log, from: from.keyBytes) { key, value in
                    guard key.count == 8 else { return true }
                    let lsn = LSN(Keys.readUInt64(key, at: 0))
                    if let to, lsn > to { return false }
                    let entry: LogEntry
                    do throws(StoreError) {
                        entry = .record(try LogRecord.decode(Array(value), expectedLSN: lsn))
                    } catch {
                        entry = .unreadable(lsn: lsn, error: error)
                    }
                    if let collection, case .record(let r) = entry, r.collection != collection { return true }
                    return try body(entry)
                }
            }
        } catch let error as LMDBError {
            throw StoreError(error, doing: "reading the log")
        }
    }
}
