import Foundation
import FreshetLMDB

/// Folds a store's log, in LSN order, into a ``ScratchState`` (in memory) with the store's own ``Fold``.
///
/// The log is read in chunks of at most ``chunkSize`` records, each in its own short read
/// transaction, so a live store's writer is never held back for long (LMDB readers do not
/// block the writer, but a long reader keeps old pages from being reused). Records that do
/// not decode, and LSNs that are missing, are recorded in ``problems`` and skipped.
///
/// The calling thread reads and decodes chunk N+1 while a second thread folds chunk N
/// (``FoldPipeline``); the chunks fold one after the other in LSN order, as one thread
/// would fold them, so the result is the same.
final class LogFolder {
    static let chunkSize = 4096

    let store: Store
    /// Records per read transaction (``chunkSize`` unless a test asks for less).
    let chunkSize: Int
    let scratch: ScratchState
    /// The last LSN read from the source log (folded or unreadable).
    private(set) var lastSeen: LSN = .zero
    /// The last record folded.
    private(set) var lastFolded: (lsn: LSN, time: Date)?
    private(set) var firstRecord: (lsn: LSN, time: Date)?
    private(set) var recordCount = 0
    private(set) var problems: [StoreProblem] = []
    /// The checkpoint the fold started from (``LogFolder+Checkpoint``); nil: from LSN 1.
    private(set) var checkpoint: CheckpointInfo?
    /// Each collection's last recorded ``ReadPolicy`` among the records folded (and in the
    /// checkpoint started from), with the LSN of the record that carried it.
    private(set) var recordedPolicies: [String: (lsn: LSN, policy: ReadPolicy)] = [:]
    /// Which LSNs may be missing (``LSNContinuity``): from LSN 1, or after the checkpoint's `throughLSN`.
    private var continuity = LSNContinuity(after: .zero)

    init(store: Store, chunkSize: Int = LogFolder.chunkSize) throws(StoreError) {
        precondition(chunkSize > 0, "LogFolder chunkSize must be positive")
        self.store = store
        self.chunkSize = chunkSize
        self.scratch = ScratchState(dbs: store.state.dbs, formatVersion: store.formatVersion)
        if let start = try loadLatestCheckpoint() {
            checkpoint = start.info
            for p in start.policies { recordedPolicies[p.collection] = (p.lsn, p.policy) }
            problems += start.problems
            lastSeen = start.info.throughLSN
            continuity = LSNContinuity(after: start.info.throughLSN)
            lastFolded = (start.info.throughLSN, start.info.throughTime)
        }
    }

    /// The last LSN of the source log now (``LSN/zero`` when empty).
    func sourceLastLSN() throws(StoreError) -> LSN {
        try Self.lastLSN(of: store)
    }

    /// The last LSN of `store`'s log now and the last LSN the store has assigned (larger
    /// when records at the end were lost), read in one transaction
    /// (``StoreDatabases/logEnd(in:)``: a damaged last key is read as its record's LSN).
    static func logEnd(of store: Store) throws(StoreError) -> (last: LSN, assigned: LSN) {
        do {
            return try store.env.read { txn in try store.state.dbs.logEnd(in: txn) }
        } catch {
            throw StoreError(error, doing: "reading the log of \(store.displayPath)")
        }
    }

    /// The last LSN of `store`'s log now (``LSN/zero`` when empty), read in its own transaction.
    static func lastLSN(of store: Store) throws(StoreError) -> LSN {
        do {
            return try store.env.read { txn in try store.state.dbs.logEnd(in: txn).last }
        } catch {
            throw StoreError(error, doing: "reading the log of \(store.displayPath)")
        }
    }

    /// Folds records up to `point` (the first record after it and the rest are left unread;
    /// a time is compared as ``ReplayPoint/isAfter(_:_:)`` does) or the end of the log. LSNs
    /// missing up to `point` are problems, a gap just before the first record after it
    /// included (``LSNContinuity``): `.lsn(4)` of a log holding 1, 2, 3, 5 folds through LSN 3
    /// and reports LSN 4 missing. `atEnd`, when given, runs inside the source read transaction
    /// in which the end of the log was reached, so it sees the materialized state exactly as
    /// of the last folded record even while an app keeps appending.
    ///
    /// `visit` sees every record that is folded, in LSN order.
    ///
    /// On a live store the writer may append faster than a chunked reader folds, so a reader
    /// that wants the end of the log (`atEnd`) could chase it forever. Once the records up to
    /// `unchunkedAfter` (the last LSN when the tool started) are folded, the next read
    /// transaction takes everything that was appended meanwhile, however much: the work is
    /// bounded.
    func run(to point: ReplayPoint, visit: ((LogRecord) -> Void)? = nil, unchunkedAfter: LSN? = nil,
             atEnd: ((borrowing Transaction) throws -> Void)? = nil) throws(StoreError) {
        let log = store.state.dbs.log
        let through: LSN? = if case .lsn(let lsn) = point { lsn } else { nil }
        continuity.through = through
        let scratch = self.scratch
        // This thread reads and decodes; the pipeline's thread folds the chunk before
        // (docs/performance.md, "Issue 8 speed round 3"). Problems found while reading travel
        // with their chunk, so they come back in log order among the fold's.
        let pipeline = FoldPipeline { chunk in try scratch.fold(chunk) }
        defer { pipeline.cancel() }
        var finished = false
        // A folded chunk comes back from the pipeline emptied, its arrays' capacity kept: the
        // next chunk fills the same buffers instead of allocating ~300 KiB of records afresh.
        var spare: FoldChunk?
        // Rows' JSON goes into blocks shared by the chunk's records (``RowJSONBlocks``): no
        // allocation per row. Records a `visit` sees may be kept (`why`'s timeline), so they
        // get rows of their own, as every decoder outside the log tools' chunks does.
        var rows = visit == nil ? RowJSONBlocks.shared() : .separate
        // Nobody but the fold reads the chunk's records then, and it folds a one-row upsert from
        // the prepared bytes: its `Row` is not made (``RowChangesLayout/isPreparedUpsert``).
        let leavesOutPreparedRows = visit == nil
        // Each collection's name made once, not once per record (``CollectionNames``).
        var names: CollectionNames? = CollectionNames()
        while !finished {
            do {
                try store.env.read { txn in
                    var chunk = spare.take() ?? FoldChunk(capacity: min(chunkSize, 1 << 16))
                    var reachedEnd = true
                    var stopped = false
                    // The loop keeps the position and the gap tracker in locals and stores them
                    // back when it ends (or throws): a stored property of this class costs an
                    // exclusivity check per access. (A nested function capturing them would box
                    // them and cost a check per access as well: `noteGap` takes them inout.)
                    var seen = lastSeen
                    var gaps = continuity
                    // The ops array the next row change is decoded into: a folded record's
                    // (``FoldChunk/recycledOps()``), taken only when the one held was used, so a
                    // record whose row is left out takes and frees none.
                    var ops: [Event.RowChanges.Op] = []
                    do {
                        defer {
                            lastSeen = seen
                            continuity = gaps
                        }
                        try txn.forEach(log, from: seen.next.keyBytes) { key, value in
                            guard key.count == 8 else {
                                chunk.problems.append(StoreProblem(database: "log", message: "a key of \(key.count) bytes (LSN keys are 8 bytes)"))
                                return true
                            }
                            // A damaged key stands for its intact record's LSN (``LogPosition``).
                            let position = LogPosition(key: key, value: value)
                            let lsn = position.lsn
                            // A damaged key met again: the next chunk's `MDB_SET_RANGE` may land
                            // on it (a key out of order misleads the search). Reported already.
                            if position.damagedKey != nil, lsn <= seen { return true }
                            if chunk.count >= chunkSize, unchunkedAfter.map({ seen < $0 }) ?? true {
                                reachedEnd = false
                                return false
                            }
                            if let through, lsn > through {
                                Self.noteGap(before: lsn, gaps: &gaps, in: &chunk)
                                stopped = true
                                return false
                            }
                            if let problem = position.damagedKeyProblem {
                                Self.noteGap(before: lsn, gaps: &gaps, in: &chunk)
                                chunk.problems.append(problem)
                                seen = lsn
                                return true
                            }
                            // Decoded in place from the transaction's page (no array per record);
                            // the chunk copies the bytes of a proposal only.
                            let record: LogRecord
                            // Where a row change's first op lies in `value`, for the chunk to copy
                            // its ID and JSON from (``FoldChunk/append(_:bytes:layout:)``).
                            var layout: RowChangesLayout?
                            do throws(StoreError) {
                                if ops.capacity == 0, chunk.hasRecycledOps { ops = chunk.recycledOps() }
                                record = try LogRecord.decode(value, expectedLSN: lsn, rows: &rows, ops: &ops, layout: &layout, names: &names,
                                                              leavesOutPreparedRow: leavesOutPreparedRows)
                            } catch {
                                Self.noteGap(before: lsn, gaps: &gaps, in: &chunk)
                                chunk.problems.append(StoreProblem(database: "log", lsn: lsn, message: error.message))
                                seen = lsn
                                return true
                            }
                            if case .time(let time) = point, ReplayPoint.isAfter(record.timestamp, time) {
                                // The missing records may be stamped before `time`: reported.
                                Self.noteGap(before: lsn, gaps: &gaps, in: &chunk)
                                stopped = true
                                return false
                            }
                            Self.noteGap(before: lsn, gaps: &gaps, in: &chunk)
                            if let p = record.event.readPolicy { recordedPolicies[record.collection] = (lsn, p) }
                            chunk.append(consume record, bytes: value, layout: layout)
                            seen = lsn
                            return true
                        }
                    }
                    if let visit { for record in chunk.records { visit(record) } }
                    if let first = chunk.records.first, firstRecord == nil { firstRecord = (first.lsn, first.timestamp) }
                    if let last = chunk.records.last { lastFolded = (last.lsn, last.timestamp) }
                    recordCount += chunk.count
                    spare = try pipeline.submit(chunk)
                    if stopped || reachedEnd {
                        finished = true
                        // Every chunk folded before `atEnd` looks at the scratch state, inside
                        // the read transaction that reached the end.
                        problems += try pipeline.finish()
                        // Records lost at the end of the log: `meta.lastLSN` still counts them.
                        if reachedEnd, !stopped, let gap = continuity.end(assigned: try store.state.dbs.logEnd(in: txn).assigned) { problems.append(gap) }
                        if reachedEnd, !stopped, let atEnd { try atEnd(txn) }
                    }
                }
            } catch {
                throw StoreError(error, doing: "replaying the log of \(store.displayPath)")
            }
        }
    }

    /// Records, with the chunk it precedes (so problems stay in log order), a missing range
    /// before `lsn` that reaches into the range folded.
    private static func noteGap(before lsn: LSN, gaps: inout LSNContinuity, in chunk: inout FoldChunk) {
        if let gap = gaps.take(lsn) { chunk.problems.append(gap) }
    }
}
