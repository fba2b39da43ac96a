import Dispatch
import Foundation
import FreshetLMDB
import Synchronization

/// The single writer of a store. Appends from any number of tasks are queued and
/// **group-committed**: everything queued while the previous transaction was committing goes
/// into the next one — one write transaction, one fsync — and so does everything queued while
/// that one is being folded, up to ``joinLimit`` events (``commitGroup(_:join:)``).
///
/// A group runs in one write transaction without nested transactions; when a caller's batch
/// fails (an invalid event), the transaction is aborted and the group is redone with a nested
/// transaction per batch, so the bad batch is undone alone and the others still commit.
/// SyncMarks are decoded once and written once per commit (``SyncMarkCache``). Write
/// transactions run on the writer's own dispatch queue and never cross an `await`; with
/// ``commitsOnCaller`` an append that finds the writer idle runs its commit on that queue
/// through `queue.sync`, which libdispatch runs on the calling thread when the queue is free
/// (see ``commitIfIdle(_:onCommitted:)``).
final class LogWriter: Sendable {
    struct Entry: Sendable {
        var collection: String
        var event: Event
    }

    private struct Job: Sendable {
        var entries: [Entry]
        /// Runs after the commit and before observers hear of it (not when the job fails).
        var onCommitted: (@Sendable () -> Void)?
        /// Resumed exactly once: by ``commit(_:)``, or at once when the writer is closed.
        /// Unsafe rather than checked: a checked continuation allocates per append.
        var continuation: UnsafeContinuation<LSN, any Error>
    }

    private struct State: Sendable {
        var jobs: [Job] = []
        var draining = false
        var isClosed = false
        var lastLSN: LSN
        /// `groupSizes[n]`: how many commits held `n` appends (index 0 unused).
        var groupSizes: [Int] = []
    }

    private let env: Environment
    private let state: MaterializedState
    private let queue = DispatchQueue(label: "freshet.writer", qos: .userInitiated)
    private let mutable: Mutex<State>
    private let now: @Sendable () -> Date
    /// Called on the writer's queue after each commit with the collections it touched and its last LSN.
    private let didCommit: @Sendable (Set<String>, LSN) -> Void

    /// How far the map may grow when a commit finds it full (``Configuration/maxMapSize``);
    /// 0: never.
    private let maxMapSize: Int

    /// Whether an append that finds the writer idle commits on the calling thread
    /// (``commitIfIdle(_:onCommitted:)``). The store sets it for commits that never wait for
    /// the disk (``Configuration/Durability/none``): a flushing commit stays on the writer's
    /// thread, so no task's thread waits for an fsync.
    private let commitsOnCaller: Bool

    /// Whether stamp-only changes of marks go to the stamp journal (``MarkStamps``): a store of
    /// format 2. A format 1 store another process had open stays format 1 and is written as
    /// format 1 writes it (``Store``'s open).
    private let journalsStamps: Bool

    init(env: Environment, state: MaterializedState, lastLSN: LSN, now: @escaping @Sendable () -> Date, maxMapSize: Int = 0, commitsOnCaller: Bool = false,
         journalsStamps: Bool = true, didCommit: @escaping @Sendable (Set<String>, LSN) -> Void) {
        self.journalsStamps = journalsStamps
        self.maxMapSize = maxMapSize
        self.commitsOnCaller = commitsOnCaller
        self.env = env
        self.state = state
        self.now = now
        self.didCommit = didCommit
        self.mutable = Mutex(State(lastLSN: lastLSN))
    }

    /// The last LSN committed.
    var lastLSN: LSN { mutable.withLock { $0.lastLSN } }

    /// How many group commits held each number of appends, `[appends: commits]` (a failed
    /// commit counts too): how well concurrent appends share a commit (`freshet-bench`'s W1
    /// prints it with `FRESHET_BENCH_W1_TRACE=1`, docs/performance.md).
    var groupSizes: [Int: Int] {
        mutable.withLock { s in
            var sizes: [Int: Int] = [:]
            for (n, commits) in s.groupSizes.enumerated() where commits > 0 { sizes[n] = commits }
            return sizes
        }
    }

    /// Appends `entries` atomically (all or none) and returns the LSN of the last one.
    /// - Throws: ``StoreError`` (``StoreError/closed``, ``StoreError/mapFull``,
    ///   ``StoreError/invalidEvent``, ``StoreError/storage``); nothing of the batch is kept then.
    ///
    /// `onCommitted` runs once the batch is committed, before observers are told: in-memory
    /// state that the same emission must show (a fetch no longer in flight) changes there.
    func append(_ entries: [Entry], onCommitted: (@Sendable () -> Void)? = nil) async throws -> LSN {
        precondition(!entries.isEmpty, "append needs at least one event")
        if commitsOnCaller, let result = commitIfIdle(entries, onCommitted: onCommitted) { return try result.get() }
        return try await withUnsafeThrowingContinuation { continuation in
            let accepted = mutable.withLock { s -> Bool in
                if s.isClosed { return false }
                s.jobs.append(Job(entries: entries, onCommitted: onCommitted, continuation: continuation))
                if s.draining { return true }
                s.draining = true
                // Queued under the lock: a `close()` that marks the writer closed after this
                // finds the drain on the queue and waits for it.
                queue.async { self.drain() }
                return true
            }
            if !accepted { continuation.resume(throwing: StoreError(.closed, "the store is closed")) }
        }
    }

    /// When no commit runs and nothing is queued, commits `entries` as the first batch of a
    /// group on the calling thread, as a leader does in LevelDB's group commit: handing it to
    /// the writer's thread and resuming the caller from there were two thread wake-ups per
    /// append, about a tenth of refreshing a 1,000-row page (docs/performance.md, round 10).
    /// Appends queued meanwhile join the group as in ``commit(_:)`` and are resumed here; what
    /// is queued after it goes to the writer's queue. Returns nil, committing nothing, when
    /// the writer is busy or closed: the append then queues as usual.
    ///
    /// The commit runs inside `queue.sync`, so it is ordered with the queue's drains and
    /// with ``close()`` exactly like a drain; the writer is claimed (`draining`) only on the
    /// queue, after a look without it that keeps a busy writer from blocking the caller.
    private func commitIfIdle(_ entries: [Entry], onCommitted: (@Sendable () -> Void)?) -> Result<LSN, any Error>? {
        guard mutable.withLock({ Self.isIdle($0) }) else { return nil }
        return queue.sync { () -> Result<LSN, any Error>? in
            let leads = mutable.withLock { s -> Bool in
                guard Self.isIdle(s) else { return false }
                s.draining = true
                return true
            }
            guard leads else { return nil }
            var joined: [Job] = []
            let group = commitGroup([entries]) {
                let more = self.takeJobs(stopDraining: false)
                joined += more
                return more.map(\.entries)
            }
            if case .success = group.results[0] { onCommitted?() }
            finish(joined, group.results.dropFirst(), touched: group.touched, last: group.last)
            // Appends queued since the group closed are the writer queue's, after this block.
            let more = mutable.withLock { s -> Bool in
                if s.jobs.isEmpty { s.draining = false }
                return s.draining
            }
            if more { queue.async { self.drain() } }
            return group.results[0]
        }
    }

    private static func isIdle(_ s: State) -> Bool { !s.isClosed && !s.draining && s.jobs.isEmpty }

    /// Refuses new appends, waits for queued ones to finish, and returns.
    func close() {
        mutable.withLock { $0.isClosed = true }
        // A commit on a caller's thread hands what queued meanwhile to a drain it queues from
        // inside its `queue.sync` block: behind this `queue.sync` when that one was already
        // waiting. So wait until no drain is left (none starts once the writer is closed).
        repeat { queue.sync {} } while mutable.withLock({ $0.draining })
    }

    private func drain() {
        while true {
            let jobs = takeJobs(stopDraining: true)
            if jobs.isEmpty { return }
            commit(jobs)
        }
    }

    /// Takes every queued job; with `stopDraining`, an empty queue ends the drain (the next
    /// append starts one).
    private func takeJobs(stopDraining: Bool) -> [Job] {
        mutable.withLock { s -> [Job] in
            if s.jobs.isEmpty {
                if stopDraining { s.draining = false }
                return []
            }
            defer { s.jobs = [] }
            return s.jobs
        }
    }

    /// A batch that threw while the group ran without nested transactions. It carries what the
    /// aborted transaction read of other processes' commits, which stays true after the abort.
    private struct BatchFailed: Error {
        var error: any Error
        var stored: LSN
        var external: Set<String>
    }

    private func commit(_ first: [Job]) {
        var jobs = first
        // Appends queued while this group folds join it (see `commitGroup`): the tasks the
        // last commit woke come back while this one is being built, and would otherwise wait
        // for a commit of their own.
        let group = commitGroup(first.map(\.entries)) {
            let more = self.takeJobs(stopDraining: false)
            jobs += more
            return more.map(\.entries)
        }
        finish(jobs, group.results[...], touched: group.touched, last: group.last)
    }

    /// After a group's commit: each job's `onCommitted` (when its batch committed) and its
    /// resumption, in order, then the observers' notification of the whole group.
    private func finish(_ jobs: [Job], _ results: ArraySlice<Result<LSN, any Error>>, touched: Set<String>, last: LSN) {
        for (job, result) in zip(jobs, results) {
            if case .success = result { job.onCommitted?() }
            job.continuation.resume(with: result)
        }
        if !touched.isEmpty { didCommit(touched, last) }
    }

    /// At most this many events go into one group commit through `join` (a group starts with
    /// whatever was queued, however many): a bound on how long the first append of a group
    /// waits while later ones join.
    static let joinLimit = 1024

    /// Appends and folds `batches` as one group commit, one result per batch (the batch's
    /// last LSN, or why it failed: a failed batch is undone alone). Runs on the writer's queue;
    /// tests call it directly, with no append in flight, to put batches in one group.
    ///
    /// Once the batches are folded, and before the transaction commits (and flushes), `join`
    /// is asked for more batches — those queued in the meantime — and they are folded into
    /// the same transaction, until it returns none or the group holds ``joinLimit`` events;
    /// `results` then has one entry per batch of `batches` followed by each joined batch, in
    /// the order they were given. Joining costs no wait: an empty answer commits at once.
    func commitGroup(_ batches: [[Entry]], join: (() -> [[Entry]])? = nil) -> (results: [Result<LSN, any Error>], touched: Set<String>, last: LSN) {
        let known = mutable.withLock { $0.lastLSN }
        // Every batch taken so far, joined ones included: a run again (the map grown, or
        // each batch isolated) folds them all.
        var batches = batches
        var results: [Result<LSN, any Error>]
        var touched = Set<String>()
        var last = known
        do {
            do {
                // The common case: every batch straight in the one write transaction.
                (results, touched, last) = try Store.withMapGrowth(env: env, limit: maxMapSize) { try write(&batches, join: join, known: known, isolated: false) }
            } catch let failed as BatchFailed {
                if batches.count == 1 {
                    // Alone in its group: the aborted transaction undid exactly this batch.
                    results = [.failure(StoreFiles.writeError(failed.error, doing: "appending to \(batches[0][0].collection)", directory: env.path))]
                    // Another process's commits seen inside it are still announced.
                    touched = failed.external
                    last = failed.stored
                } else {
                    // A batch failed: redo the group with a nested transaction per batch, so
                    // that batch fails alone and the others still commit.
                    (results, touched, last) = try Store.withMapGrowth(env: env, limit: maxMapSize) { try write(&batches, join: join, known: known, isolated: true) }
                }
            }
        } catch {
            let doing = batches.count == 1 ? "appending to \(batches[0][0].collection)" : "committing \(batches.count) appends"
            let failure = StoreFiles.writeError(error, doing: doing, directory: env.path)
            results = batches.map { _ in .failure(failure) }
            touched = []
            last = known
        }
        let count = batches.count
        mutable.withLock { s in
            s.lastLSN = max(s.lastLSN, last)
            if s.groupSizes.count <= count { s.groupSizes += repeatElement(0, count: count + 1 - s.groupSizes.count) }
            s.groupSizes[count] += 1
        }
        return (results, touched, last)
    }

    /// Appends and folds `batches` in one write transaction, SyncMarks cached for its length
    /// (``SyncMarkCache``), and the batches `join` hands over until then (appended to
    /// `batches`; see ``commitGroup(_:join:)``). With `isolated`, each batch runs in a nested
    /// transaction and a batch that throws is undone alone (its result is the failure);
    /// without, the first batch that throws aborts the whole transaction with ``BatchFailed``.
    ///
    /// The LSNs are taken from the store inside the transaction (the larger of `meta.lastLSN`
    /// and the log's last key), never from memory: another process may have appended since
    /// this one last committed (`known`; docs/architecture.md, "Several processes").
    /// Collections that other process touched are announced to observers with this commit's.
    private func write(_ batches: inout [[Entry]], join: (() -> [[Entry]])?, known: LSN, isolated: Bool) throws -> (results: [Result<LSN, any Error>], touched: Set<String>, last: LSN) {
        let marks = SyncMarkCache(journals: journalsStamps)
        let folding = MaterializedState(dbs: state.dbs, marks: marks)
        var results: [Result<LSN, any Error>] = []
        var touched = Set<String>()
        var last = known
        try env.write { txn in
            let stored = try state.dbs.lastLSN(in: txn)
            if stored > known {
                touched = try Self.collections(after: known, through: stored, state: state, in: txn)
            }
            let external = touched
            last = stored
            var events = 0
            var next = 0
            while true {
                if next == batches.count {
                    guard let join, events < Self.joinLimit else { break }
                    let joined = join()
                    if joined.isEmpty { break }
                    batches += joined
                }
                let batch = batches[next]
                next += 1
                events += batch.count
                let jobLast: LSN
                if isolated {
                    let saved = marks.checkpoint()
                    do {
                        jobLast = try txn.nested { child in try fold(batch, after: last, state: folding, in: child) }
                    } catch where !Store.isMapFull(error) {
                        // The nested transaction is undone; so is what it cached.
                        marks.restore(saved)
                        results.append(.failure(StoreError(error, doing: "appending to \(batch[0].collection)")))
                        continue
                    }
                } else {
                    do {
                        jobLast = try fold(batch, after: last, state: folding, in: txn)
                    } catch where !Store.isMapFull(error) {
                        // A full map is not this batch's fault: the group grows the map and runs again.
                        throw BatchFailed(error: error, stored: stored, external: external)
                    }
                }
                last = jobLast
                results.append(.success(jobLast))
                for entry in batch { touched.formUnion(entry.event.affectedCollections(primary: entry.collection)) }
            }
            try marks.flush(into: txn, marks: state.dbs.marks, meta: state.dbs.meta)
            if last != stored {
                try txn.put(state.dbs.meta, key: MetaKey.lastLSN, value: last.keyBytes)
            }
        }
        return (results, touched, last)
    }

    /// Appends each of the batch's events after `last` and folds it; returns its last LSN.
    private func fold(_ batch: [Entry], after last: LSN, state: MaterializedState, in txn: borrowing Transaction) throws -> LSN {
        var lsn = last
        for entry in batch {
            guard let following = lsn.successor else {
                throw StoreError(.logExhausted, "the log of \(env.path) has used its last LSN (\(lsn)); nothing more can be appended", lsn: lsn)
            }
            lsn = following
            let record = LogRecord(lsn: lsn, timestamp: now(), collection: entry.collection, event: entry.event)
            // Encoded straight into the space LMDB reserves for it: a fetched document is
            // copied once into the map, not into a buffer first (docs/performance.md, round 9).
            let parts = try record.checkedParts()
            try txn.put(state.dbs.log, key: lsn.keyBytes, reserving: parts.count, append: true) { parts.write(into: $0) }
            try Fold.apply(record, to: state, in: txn)
        }
        return lsn
    }

    /// Looks for commits made by other processes since this one last committed or looked:
    /// reads the store's last LSN (one read transaction, one cursor step) and, when it moved,
    /// tells observers of every collection those records touched.
    ///
    /// - Returns: the collections other processes changed (empty when nothing changed).
    /// - Throws: ``StoreError/storage`` when the store cannot be read.
    func checkForExternalChanges() throws -> Set<String> {
        let known = lastLSN
        let (stored, collections) = try env.read { txn -> (LSN, Set<String>) in
            let stored = try state.dbs.lastLSN(in: txn)
            guard stored > known else { return (stored, []) }
            return (stored, try Self.collections(after: known, through: stored, state: state, in: txn))
        }
        let advanced = mutable.withLock { s -> Bool in
            guard stored > s.lastLSN else { return false }
            s.lastLSN = stored
            return true
        }
        if advanced, !collections.isEmpty { didCommit(collections, stored) }
        return collections
    }

    /// The collections the records in `known + 1 ... stored` touch (a mutation's record
    /// touches every collection it names). A record that cannot be decoded counts for the
    /// collection named in its header, when that much is readable.
    private static func collections(after known: LSN, through stored: LSN, state: MaterializedState, in txn: borrowing Transaction) throws -> Set<String> {
        guard let first = known.successor else { return [] }
        var names = Set<String>()
        try txn.forEach(state.dbs.log, from: first.keyBytes) { key, value in
            guard key.count == 8 else { return true }
            let lsn = LSN(Keys.readUInt64(key, at: 0))
            guard lsn <= stored else { return false }
            let bytes = Array(value)
            do throws(StoreError) {
                let record = try LogRecord.decode(bytes, expectedLSN: lsn)
                names.formUnion(record.event.affectedCollections(primary: record.collection))
            } catch {
                // Unreadable (tools report it); its header may still name its collection.
                if let name = LogRecord.collectionName(in: bytes) { names.insert(name) }
            }
            return true
        }
        return names
    }
}

extension StoreError {
    /// Wraps any error met while using LMDB or decoding, keeping a ``StoreError`` as it is.
    init(_ error: any Error, doing what: String) {
        switch error {
        case let error as StoreError:
            self = error
        case let error as LMDBError:
            switch error {
            case LMDBError.closed:
                self.init(.closed, "\(what): the store is closed")
            case LMDBError.mapFull:
                self.init(.mapFull, "\(what): the store is full (LMDB map size reached, grown up to Configuration.maxMapSize); compact it or reopen it with a larger maxMapSize")
            case LMDBError.invalid, LMDBError.versionMismatch:
                self.init(.notAStore, "\(what): not an LMDB store this Freshet can read (\(error))")
            case LMDBError.corrupted:
                self.init(.corruptRecord, "\(what): the LMDB file is corrupted (\(error))")
            case LMDBError(code: ENOSPC, function: ""), LMDBError(code: EFBIG, function: ""):
                self.init(.diskFull, "\(what): no space left for the store (\(error))")
            case LMDBError(code: EACCES, function: ""), LMDBError(code: EPERM, function: ""), LMDBError(code: EROFS, function: ""):
                self.init(.permissionDenied, "\(what): not allowed to write the store (\(error))")
            default:
                self.init(.storage, "\(what): \(error)")
            }
        case let error as FormatError:
            self.init(.corruptRecord, "\(what): \(error.reason)")
        default:
            self.init(.storage, "\(what): \(error)")
        }
    }
}
