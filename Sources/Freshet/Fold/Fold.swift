import Foundation
import FreshetLMDB

/// The fold: applies one log record to the materialized state, `(state, event) -> state`.
///
/// It is deterministic — no clock reads, no randomness, no I/O besides the transaction it is
/// given — and it is the only code that changes materialized state. The live store, replay
/// and tests all go through it, so replaying the log rebuilds exactly the materialized state.
enum Fold {
    static func apply(_ record: LogRecord, to state: MaterializedState, in txn: borrowing Transaction) throws {
        let collection = record.collection
        let prefix = Keys.collection(collection)
        var mark = try state.syncMark(collection, in: txn) ?? SyncMark()
        mark.lastLSN = record.lsn
        let time = record.timestamp

        switch record.event {
        case .fetched(let fetched):
            switch fetched.placement {
            case .replace:
                try state.removePositions(from: 0, to: nil, prefix: prefix, in: txn)
                try place(fetched.rows, page: 0, state: state, prefix: prefix, in: txn)
                mark.pageCount = 0
            case .page(let index, let isLast):
                let lower = Keys.position(page: index, index: 0)
                let upper = Keys.position(page: index + 1, index: 0)
                try state.removePositions(from: lower, to: isLast ? nil : upper, prefix: prefix, in: txn)
                try place(fetched.rows, page: index, state: state, prefix: prefix, in: txn)
                mark.pageCount = isLast ? index + 1 : max(mark.pageCount, index + 1)
            case .upsert:
                for row in fetched.rows { try upsert(row, state: state, prefix: prefix, in: txn) }
            }
            mark.fetchedAt = time
            mark.fetchedLSN = record.lsn
            mark.validatedAt = time
            mark.lastAttemptAt = time
            mark.etag = fetched.response.etag
            mark.lastModified = fetched.response.lastModified
            mark.cacheControl = fetched.response.cacheControl
            mark.responseDate = fetched.response.date
            mark.age = fetched.response.age
            mark.expires = fetched.response.expires
            if case .page = fetched.placement { mark.nextCursor = fetched.nextCursor } else { mark.nextCursor = nil }
            mark.lastError = nil
            mark.consecutiveFailures = 0
            mark.invalidatedAt = nil
            mark.invalidatedLSN = nil

        case .notModified(let n):
            // RFC 9111 §4.3.4: a 304 updates the stored response's header fields; a validator
            // the 304 does not carry is kept.
            mark.validatedAt = time
            mark.lastAttemptAt = time
            if let etag = n.response.etag { mark.etag = etag }
            if let lm = n.response.lastModified { mark.lastModified = lm }
            if let cc = n.response.cacheControl { mark.cacheControl = cc }
            if let d = n.response.date { mark.responseDate = d }
            mark.age = n.response.age
            if let e = n.response.expires { mark.expires = e }
            mark.lastError = nil
            mark.consecutiveFailures = 0
            mark.invalidatedAt = nil
            mark.invalidatedLSN = nil

        case .fetchFailed(let failed):
            mark.lastAttemptAt = time
            mark.lastError = SyncMark.FailureInfo(reason: failed.reason, status: failed.status, message: failed.message, lsn: record.lsn)
            mark.consecutiveFailures += 1

        case .changed(let changes), .localWrite(let changes):
            for op in changes.ops {
                switch op {
                case .upsert(let row): try upsert(row, state: state, prefix: prefix, in: txn)
                case .delete(let id): try state.remove(id: id, prefix: prefix, in: txn)
                }
            }

        case .invalidated:
            mark.invalidatedAt = time
            mark.invalidatedLSN = record.lsn
        }
        try state.putSyncMark(mark, collection, in: txn)
    }

    /// Writes `rows` as page `page`, in order. A row whose ID is already elsewhere in the
    /// collection moves here (the newest page wins), so no ID is ever held twice.
    private static func place(_ rows: [Row], page: Int, state: MaterializedState, prefix: [UInt8], in txn: borrowing Transaction) throws {
        for (i, row) in rows.enumerated() {
            try state.remove(id: row.id, prefix: prefix, in: txn)
            try state.put(row, at: Keys.position(page: page, index: i), prefix: prefix, in: txn)
        }
    }

    /// Replaces the row with the same ID in place, or appends the row after the last one.
    private static func upsert(_ row: Row, state: MaterializedState, prefix: [UInt8], in txn: borrowing Transaction) throws {
        if let position = try state.position(of: row.id, prefix: prefix, in: txn) {
            try state.put(row, at: position, prefix: prefix, in: txn)
        } else {
            let position = try state.lastPosition(prefix: prefix, in: txn).map { $0 + 1 } ?? 0
            try state.put(row, at: position, prefix: prefix, in: txn)
        }
    }
}
