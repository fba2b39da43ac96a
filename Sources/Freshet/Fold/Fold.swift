import Foundation
import FreshetLMDB

/// The fold: applies one log record to the materialized state, `(state, event) -> state`.
///
/// It is deterministic — no clock reads, no randomness, no I/O besides the transaction it is
/// given — and it is the only code that changes materialized state. The live store, replay
/// and tests all go through it, so replaying the log rebuilds exactly the materialized state.
enum Fold {
    static func apply(_ record: LogRecord, to state: MaterializedState, in txn: borrowing some FoldTables & ~Copyable) throws {
        try withUnsafePointer(to: record) { try apply(lent: $0, to: state, in: txn) }
    }

    /// ``apply(_:to:in:)`` of the record at `record`, read where it is: a log tool's chunk
    /// lends its records in place. Passing `records[i]` by value made a copy of every record
    /// (a retain of each field through the value witnesses, and a release after), 0.4 billion
    /// instructions on the W5 replay (docs/performance.md, "Issue 8 speed round 5 (fold side)");
    /// here only a local write's changes are copied out. `record` is valid for the call.
    static func apply(lent record: UnsafePointer<LogRecord>, to state: MaterializedState, in txn: borrowing some FoldTables & ~Copyable) throws {
        switch record.pointee.event {
        case .changed(let changes) where changes.origin == nil, .localWrite(let changes) where changes.origin == nil:
            return try applyLocalChanges(changes, collection: record.pointee.collection, lsn: record.pointee.lsn, state: state, in: txn)
        default:
            return try applyGeneral(record.pointee, to: state, in: txn)
        }
    }

    /// Every record but a local write (or a change without an origin); folds those too, to the
    /// same state as ``applyLocalChanges(_:collection:lsn:state:in:)``.
    private static func applyGeneral(_ record: LogRecord, to state: MaterializedState, in txn: borrowing some FoldTables & ~Copyable) throws {
        switch record.event {
        case .mutationProposed(let p): return try applyProposed(p, record: record, state: state, in: txn)
        case .mutationConfirmed(let c): return try applyConfirmed(c, record: record, state: state, in: txn)
        case .mutationRolledBack(let r): return try applyRolledBack(r, record: record, state: state, in: txn)
        case .checkpoint: return try applyCheckpoint(record, state: state, in: txn)
        case .evicted: return try applyEvicted(record, state: state, in: txn)
        default: break
        }
        let collection = record.collection
        let prefix = Keys.collection(collection)
        var mark = try state.syncMark(collection, in: txn) ?? SyncMark()
        mark.lastLSN = record.lsn
        let time = record.timestamp
        var rowsChanged = false

        switch record.event {
        case .fetched(let fetched):
            let rows = fetched.rowsWithheld ? [] : fetched.rows
            let slices = fetched.rowsWithheld ? nil : fetched.slices
            switch fetched.placement {
            case .replace:
                let preserved = try confirmedRows(after: fetched.basisLSN, collection: collection, state: state, in: txn)
                rowsChanged = try replaceRange(with: rows, slices: slices, page: 0, lower: 0, upper: nil, state: state, prefix: prefix, in: txn)
                if try reapplyConfirmed(after: fetched.basisLSN, collection: collection, prune: true, preserved: preserved, state: state, in: txn) { rowsChanged = true }
                mark.pageCount = 0
                mark.pages = []
                mark.resumePage = nil
            case .page(let index, let isLast):
                let lower = Keys.position(page: index, index: 0)
                let upper = isLast ? nil : Keys.position(page: index + 1, index: 0)
                let preserved = try confirmedRows(after: fetched.basisLSN, collection: collection, state: state, in: txn)
                rowsChanged = try replaceRange(with: rows, slices: slices, page: index, lower: lower, upper: upper, state: state, prefix: prefix, in: txn)
                if try reapplyConfirmed(after: fetched.basisLSN, collection: collection, prune: false, preserved: preserved, state: state, in: txn) { rowsChanged = true }
                mark.pageCount = isLast ? index + 1 : max(mark.pageCount, index + 1)
                let page = SyncMark.PageMark(url: fetched.response.url, etag: fetched.response.etag, lastModified: fetched.response.lastModified, next: fetched.nextCursor)
                let held = mark.pages.count
                mark.pages = setPage(page, at: index, isLast: isLast, in: mark.pages)
                mark.nextCursor = mark.pages.last?.next
                mark.resumePage = resumePage(after: index, held: held, now: mark.pages.count, current: mark.resumePage)
            case .upsert:
                for row in rows where try upsert(row, state: state, prefix: prefix, in: txn) { rowsChanged = true }
            }
            mark.fetchedAt = time
            mark.fetchedLSN = record.lsn
            mark.etag = fetched.response.etag
            mark.lastModified = fetched.response.lastModified
            mark.cacheControl = fetched.response.cacheControl
            mark.responseDate = fetched.response.date
            mark.age = fetched.response.age
            mark.expires = fetched.response.expires
            mark.noStore = fetched.rowsWithheld
            if case .page = fetched.placement {} else { mark.nextCursor = nil }
            validated(&mark, at: time, response: fetched.response, basis: fetched.basisLSN)

        case .notModified(let n):
            // RFC 9111 §4.3.4: a 304 updates the stored response's header fields; a validator
            // the 304 does not carry is kept.
            if let etag = n.response.etag { mark.etag = etag }
            if let lm = n.response.lastModified { mark.lastModified = lm }
            if let cc = n.response.cacheControl { mark.cacheControl = cc }
            if let d = n.response.date { mark.responseDate = d }
            if let e = n.response.expires { mark.expires = e }
            mark.age = n.response.age
            if let index = n.page, index < mark.pages.count {
                if let etag = n.response.etag { mark.pages[index].etag = etag }
                if let lm = n.response.lastModified { mark.pages[index].lastModified = lm }
                mark.resumePage = resumePage(after: index, held: mark.pages.count, now: mark.pages.count, current: mark.resumePage)
            }
            validated(&mark, at: time, response: n.response, basis: n.basisLSN)

        case .fetchFailed(let failed):
            mark.lastAttemptAt = time
            mark.lastError = SyncMark.FailureInfo(reason: failed.reason, status: failed.status, message: failed.message, lsn: record.lsn)
            // Read from disk: saturates rather than overflowing.
            if mark.consecutiveFailures < Int.max { mark.consecutiveFailures += 1 }

        case .changed(let changes), .localWrite(let changes):
            if let origin = changes.origin {
                // A re-delivered push event folds nothing (docs/log-format.md §10.4).
                if let cursor = mark.pushCursor(source: origin.source), origin.repeats(cursor.eventID) { break }
                mark.setPushCursor(PushCursor(source: origin.source, eventID: origin.eventID, lsn: record.lsn))
            }
            rowsChanged = try applyOps(changes.ops, state: state, prefix: prefix, in: txn)

        case .invalidated:
            mark.invalidatedAt = time
            mark.invalidatedLSN = record.lsn

        case .mutationProposed, .mutationConfirmed, .mutationRolledBack, .checkpoint, .evicted:
            break // handled above
        }
        if rowsChanged { mark.rowsLSN = record.lsn }
        try state.putSyncMark(mark, collection, in: txn)
    }

    /// A local write, or a change without a push origin: its ops, then the mark's `lastLSN`
    /// and `rowsLSN` set in place (``MaterializedState/localWriteTarget(_:in:)``) — the same
    /// mark the general path above gives, without copying the mark out and back per record
    /// (docs/performance.md, "Issue 8 speed round 4 (fold side)"), and with the collection's
    /// key prefix kept by the commit's mark cache (round 5).
    private static func applyLocalChanges(_ changes: Event.RowChanges, collection: String, lsn: LSN, state: MaterializedState, in txn: borrowing some FoldTables & ~Copyable) throws {
        // Two calls around the ops, not a closure: a closure capturing `state` copied it (a
        // retain of each of its handles' names) per record.
        let target = try state.localWriteTarget(collection, in: txn)
        let rowsChanged = try applyOps(changes.ops, state: state, prefix: target.prefix, in: txn)
        try state.stampLocalWrite(collection, at: target.slot, lsn: lsn, rowsChanged: rowsChanged, in: txn)
    }

    /// ``apply(lent:to:in:)`` of a local write (or a change without a push origin) of exactly
    /// one upserted row, `record`, into the log tools' tables, from what the reading thread
    /// prepared (`upsert`, its bytes in `bytes`: ``FoldChunk/Upsert``) — the same mark,
    /// lookups, comparison and puts as ``applyLocalChanges(_:collection:lsn:state:in:)``,
    /// without matching the record's event, copying its row out of the chunk or reaching its
    /// JSON through `Data`, hashing the key, or finding the collection's mark by name per
    /// record: `slot` is the collection's mark slot for the chunk, nil until its first record
    /// (docs/performance.md, "Issue 8 speed round 7 (fold side)").
    static func applyLocalUpsert(_ upsert: FoldChunk.Upsert, bytes: UnsafeRawBufferPointer, record: UnsafePointer<LogRecord>,
                                 slot: inout SyncMarkCache.Slot?, tables index: Int, _ rowsTable: Int,
                                 state: MaterializedState, in txn: MemoryTables) throws {
        if slot == nil {
            // The prefix it gives is the key's first `prefixCount` bytes: both are the name's
            // length and bytes (``Keys/collection(_:)``, the record's own).
            slot = try state.localWriteTarget(record.pointee.collection, in: txn).slot
        }
        let key = UnsafeRawBufferPointer(rebasing: bytes[upsert.start..<(upsert.start + upsert.keyCount)])
        let rowStart = upsert.start + upsert.keyCount
        let rowsChanged = try state.upsert(key: key, hash: upsert.hash, prefix: UnsafeRawBufferPointer(rebasing: key[..<upsert.prefixCount]),
                                           row: UnsafeRawBufferPointer(rebasing: bytes[rowStart..<(rowStart + upsert.rowCount)]),
                                           index: index, rowsTable: rowsTable, in: txn)
        if let marks = state.marks, let slot {
            marks.stamp(at: slot, lsn: record.pointee.lsn, rowsChanged: rowsChanged)
        } else {
            try state.stampLocalWrite(record.pointee.collection, at: slot, lsn: record.pointee.lsn, rowsChanged: rowsChanged, in: txn)
        }
    }

    /// Applies upserts and deletes in order; returns whether any changed a row.
    private static func applyOps(_ ops: [Event.RowChanges.Op], state: MaterializedState, prefix: [UInt8], in txn: borrowing some FoldTables & ~Copyable) throws -> Bool {
        var changed = false
        for op in ops {
            switch op {
            case .upsert(let row):
                if try upsert(row, state: state, prefix: prefix, in: txn) { changed = true }
            case .delete(let id):
                if try state.remove(id: id, prefix: prefix, in: txn) { changed = true }
            }
        }
        return changed
    }

    /// What a 2xx or a 304 does to the mark: the server confirmed the rows now.
    private static func validated(_ mark: inout SyncMark, at time: Date, response: ResponseInfo, basis: LSN?) {
        mark.validatedAt = time
        mark.lastAttemptAt = time
        mark.responseDelayMicros = response.durationMicros
        mark.lastError = nil
        mark.consecutiveFailures = 0
        // An invalidation appended after the request left is not answered by this response.
        if let invalidated = mark.invalidatedLSN, let basis, invalidated > basis { return }
        mark.invalidatedAt = nil
        mark.invalidatedLSN = nil
    }

    /// Where an unfinished revalidation resumes once page `index` was confirmed, when the
    /// collection held `held` pages before and holds `now` after: the next held page, or nil
    /// when it was the last one. A page appended after the held ones (a `loadMore`) leaves the
    /// resume point as it was.
    private static func resumePage(after index: Int, held: Int, now: Int, current: Int?) -> Int? {
        guard index < held else { return current }
        return index + 1 < now ? index + 1 : nil
    }

    private static func setPage(_ page: SyncMark.PageMark, at index: Int, isLast: Bool, in pages: [SyncMark.PageMark]) -> [SyncMark.PageMark] {
        var pages = pages
        if index < pages.count {
            pages[index] = page
        } else {
            // Pages are fetched in order; a gap (a page fetched without its predecessors)
            // is filled with placeholders that carry no validators.
            while pages.count < index { pages.append(SyncMark.PageMark(url: "")) }
            pages.append(page)
        }
        if isLast { pages.removeSubrange((index + 1)...) }
        return pages
    }

    /// Makes the rows at positions `lower ..< upper` exactly `rows` (placed as page `page`, in
    /// order). A row whose ID is elsewhere in the collection moves here (the newest page wins),
    /// so no ID is ever held twice. Returns whether anything changed; identical rows write nothing.
    private static func replaceRange(with rows: [Row], slices: RowSlices?, page: Int, lower: UInt64, upper: UInt64?, state: MaterializedState, prefix: [UInt8], in txn: borrowing some FoldTables & ~Copyable) throws -> Bool {
        // Each row is encoded once, into one buffer: for the comparison and, when something
        // changed, for the put.
        let wanted = EncodedRows(rows, page: page, prefix: prefix, slices: slices)
        if try state.range(from: lower, to: upper, prefix: prefix, holds: wanted, in: txn) {
            return false
        }
        try state.removePositions(from: lower, to: upper, prefix: prefix, in: txn)
        // An ID held elsewhere in the collection (another page, or earlier in this one)
        // moves here.
        try state.place(wanted, prefix: prefix, in: txn)
        return true
    }

    /// Replaces the row with the same ID in place, or appends the row after the last one.
    /// Returns whether anything changed.
    static func upsert(_ row: Row, state: MaterializedState, prefix: [UInt8], in txn: borrowing some FoldTables & ~Copyable) throws -> Bool {
        // Found and compared with what is stored in one lookup, in place; the row is encoded
        // only to be written.
        if let stored = try state.storedRow(id: row.id, json: row.json, prefix: prefix, in: txn) {
            if stored.same { return false }
            try state.put(row, at: stored.position, prefix: prefix, in: txn)
        } else {
            var position: UInt64 = 0
            if let last = try state.lastPosition(prefix: prefix, in: txn) {
                // A position read from disk: the largest one has no successor (never a trap).
                guard last < UInt64.max else {
                    throw StoreError(.corruptRecord, "row \(row.id) cannot be added: the collection's last position is 2^64 - 1")
                }
                position = last + 1
            }
            try state.put(row, at: position, prefix: prefix, in: txn)
        }
        return true
    }
}
