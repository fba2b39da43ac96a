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
    /// `missing`, when given, is called with each range of LSNs missing from `from ... to`
    /// under the rule `verify` applies (``LSNContinuity``: none may be missing, except at or
    /// before the latest checkpoint's `throughLSN`), before the entry that follows the gap:
    /// `LSN 4 is missing: the log jumps from 3 to 5`. A gap just before `to` is seen in the
    /// first key after it.
    ///
    /// - Throws: ``StoreError/closed``, ``StoreError/storage``, ``StoreError/corruptRecord``
    ///   (with `missing`) when `meta.checkpoint` names no readable checkpoint, or what `body` throws.
    public func readLog(from: LSN = LSN(1), to: LSN? = nil, collection: String? = nil, missing: ((StoreProblem) -> Void)? = nil,
                        _ body: (LogEntry) throws -> Bool) throws {
        try checkOpen()
        do {
            try env.read { txn in
                var continuity = try missing.map { _ in
                    LSNContinuity(after: try Self.continuityFloor(before: from, dbs: state.dbs, in: txn), from: from, through: to)
                }
                var reachedEnd = true
                try txn.forEach(state.dbs.log, from: from.keyBytes) { key, value in
                    guard key.count == 8 else { return true }
                    // A damaged key stands for its intact record's LSN (``LogPosition``).
                    let position = LogPosition(key: key, value: value)
                    let lsn = position.lsn
                    // Before the range: where `MDB_SET_RANGE` landed on a damaged key.
                    if lsn < from { return true }
                    if let gap = continuity?.take(lsn) { missing?(gap) }
                    if let to, lsn > to {
                        reachedEnd = false
                        return false
                    }
                    let entry: LogEntry
                    if let error = position.damagedKeyError {
                        entry = .unreadable(lsn: lsn, error: error)
                    } else {
                        do throws(StoreError) {
                            entry = .record(try LogRecord.decode(Array(value), expectedLSN: lsn))
                        } catch {
                            entry = .unreadable(lsn: lsn, error: error)
                        }
                    }
                    if let collection, case .record(let r) = entry, r.collection != collection { return true }
                    if try body(entry) { return true }
                    reachedEnd = false
                    return false
                }
                // Records lost at the end of the log: `meta.lastLSN` still counts them.
                if reachedEnd, let gap = try continuity?.end(assigned: state.dbs.logEnd(in: txn).assigned) { missing?(gap) }
            }
        } catch let error as LMDBError {
            throw StoreError(error, doing: "reading the log")
        }
    }
}

extension Store {
    /// Where a gap check of the log from `from` on starts: the last LSN the log holds before
    /// `from`, or the latest checkpoint's `throughLSN` when that is later (``LSNContinuity``).
    static func continuityFloor(before from: LSN, dbs: StoreDatabases, in txn: borrowing Transaction) throws -> LSN {
        var before = LSN.zero
        if from > LSN(1) {
            try txn.forEach(dbs.log, from: LSN(from.rawValue - 1).keyBytes, reverse: true) { key, value in
                if key.count == 8 { before = LogPosition(key: key, value: value).lsn }
                return false
            }
        }
        return LSNContinuity.floor(before: before, checkpointThrough: try dbs.latestCheckpoint(in: txn)?.checkpoint.throughLSN)
    }
}
