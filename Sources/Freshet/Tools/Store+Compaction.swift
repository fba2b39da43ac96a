import Foundation
import FreshetLMDB

extension Store {
    /// Compacts the log: writes a `checkpoint` record holding the folded state through the
    /// last record older than `window`, and removes the records it makes redundant (docs/
    /// operations.md, "Compaction schedule"; docs/log-format.md §6.11).
    ///
    /// ```swift
    /// let report = try store.compact(keeping: .seconds(7 * 86_400))
    /// print(report.removedRecords, report.checkpoint?.throughLSN ?? .zero)
    /// ```
    ///
    /// - The window is taken in log order: every record from the first one stamped after
    ///   `now − window` (the store's clock) on is kept, so a clock that moved backwards never
    ///   hides a record inside the window.
    /// - The proposal of every mutation pending at the checkpoint's LSN is kept (the fold and
    ///   the pending overlay read it back); kept records keep their LSNs, and the checkpoint
    ///   gets the next LSN. No LSN is ever reused.
    /// - The records up to that LSN are folded first in short read transactions (the store
    ///   stays usable); the checkpoint is appended and the covered records removed in **one**
    ///   LMDB write transaction, so a crash at any point leaves the old log or the new one.
    /// - `replay`, `verify` and `why` then start from the checkpoint; asking them for an earlier
    ///   LSN throws ``ToolError/beforeCheckpoint``. The file does not shrink (LMDB reuses the
    ///   freed pages); `freshet compact --vacuum` rewrites it smaller.
    ///
    /// - Parameters:
    ///   - window: how much history to keep; nil: ``Configuration/compaction``'s `keep`, or
    ///     ``CompactionPolicy/keep``'s default (7 days). `.zero` keeps none.
    ///   - progressEvery: how many records between two progress calls (at least 1).
    ///   - progress: called on the calling thread every `progressEvery` records folded and
    ///     removed, at the end of each phase, and once more (``CompactionProgress/Phase/committing``)
    ///     inside the write transaction just before it commits.
    /// - Returns: what was done; ``CompactionReport/checkpoint`` is nil when nothing was old enough.
    /// - Throws: ``StoreError/permissionDenied`` for a store opened read-only;
    ///   ``StoreError/corruptRecord`` (or the decoding error) when a record to be covered does
    ///   not decode or fold — nothing is removed then, run `freshet verify`;
    ///   ``StoreError/locked`` when another compaction (another task or process) committed
    ///   meanwhile (nothing changed; try again); ``StoreError/mapFull`` when the map cannot grow enough; ``StoreError/closed``;
    ///   ``StoreError/storage`` for other LMDB failures.
    @discardableResult
    public func compact(keeping window: Duration? = nil, progressEvery: Int = 65_536, progress: ((CompactionProgress) -> Void)? = nil) throws(StoreError) -> CompactionReport {
        try checkOpen()
        guard !isReadOnly else {
            throw StoreError(.permissionDenied, "\(displayPath) is open read-only (create: false); compaction writes the store")
        }
        let keep = window ?? configuration.compaction?.keep ?? CompactionPolicy().keep
        let before = try latestCheckpoint()?.lsn
        do {
            return try compactUntyped(keeping: keep, every: max(1, progressEvery), progress: progress)
        } catch {
            // Another compaction (another task or process) that committed meanwhile removed
            // records this one was folding: that is `locked`, not damage (nothing was removed).
            let failure = StoreError(error, doing: "compacting \(displayPath)")
            let after: LSN?
            do {
                after = try latestCheckpoint()?.lsn
            } catch {
                throw failure // the store cannot tell; the first error says more
            }
            if let after, after != before {
                throw StoreError(.locked, "another compaction of \(displayPath) finished while this one ran (checkpoint at LSN \(after)); this one removed nothing")
            }
            throw failure
        }
    }

    private func compactUntyped(keeping window: Duration, every interval: Int, progress: ((CompactionProgress) -> Void)?) throws -> CompactionReport {
        let folder = try LogFolder(store: self)
        let start = folder.checkpoint
        let cutoff = ByteWriter.micros(dependencies.now().addingTimeInterval(-Self.seconds(window)))
        let plan = try env.read { txn in try Self.plan(after: start?.throughLSN ?? .zero, cutoff: cutoff, log: state.dbs.log, in: txn) }
        guard let through = plan.through, plan.hasEvents else {
            return CompactionReport(checkpoint: nil, removedRecords: 0, keptRecords: 0, entries: 0, windowStart: plan.windowStart)
        }
        let first = start?.throughLSN ?? .zero
        let total = Int(clamping: through.rawValue - first.rawValue)
        var folded = 0
        try folder.run(to: .lsn(through), visit: { _ in
            folded += 1
            if folded % interval == 0 { progress?(CompactionProgress(phase: .folding, done: folded, total: total)) }
        })
        progress?(CompactionProgress(phase: .folding, done: folded, total: total))
        var problems = folder.problems
        // Records lost at the end of the log, when the checkpoint would cover up to its last
        // record: its LSN would jump over them for good.
        let end = try LogFolder.logEnd(of: self)
        var tail = LSNContinuity(after: through)
        if end.last == through, let gap = tail.end(assigned: end.assigned) { problems.append(gap) }
        if let problem = problems.first {
            let n = problems.count
            throw StoreError(.corruptRecord, "nothing was removed: \(n) problem\(n == 1 ? "" : "s") in the records to be covered, first: \(problem); run `freshet verify`", lsn: problem.lsn)
        }
        guard let last = folder.lastFolded, last.lsn == through else {
            throw StoreError(.corruptRecord, "nothing was removed: the fold stopped at LSN \(folder.lastFolded?.lsn ?? .zero), not at LSN \(through)")
        }
        let (entries, pending) = try folder.scratch.checkpointEntries()
        let policies = try folder.policies()
        let kept = Set(pending)
        let written = try withMapGrowth {
            try env.write { txn -> (LogRecord, Int) in
                let current = try state.dbs.latestCheckpoint(in: txn)?.record.lsn
                guard current == start?.lsn else {
                    throw StoreError(.locked, "another process compacted the log meanwhile (checkpoint at LSN \(current ?? .zero)); nothing changed, compact again")
                }
                var doomed: [[UInt8]] = []
                try txn.forEach(state.dbs.log) { key, _ in
                    guard key.count == 8 else { return true }
                    let lsn = LSN(Keys.readUInt64(key, at: 0))
                    guard lsn <= through else { return false }
                    if !kept.contains(lsn) { doomed.append(Array(key)) }
                    return true
                }
                for (i, key) in doomed.enumerated() {
                    try txn.delete(state.dbs.log, key: key)
                    if (i + 1) % interval == 0 { progress?(CompactionProgress(phase: .removing, done: i + 1, total: doomed.count)) }
                }
                progress?(CompactionProgress(phase: .removing, done: doomed.count, total: doomed.count))
                let stored = try state.dbs.lastLSN(in: txn)
                guard let lsn = stored.successor else {
                    throw StoreError(.logExhausted, "the log of \(displayPath) has used its last LSN (\(stored)); no checkpoint can be appended", lsn: stored)
                }
                let checkpoint = Event.Checkpoint(throughLSN: through, throughTime: last.time, keptLSNs: kept.sorted(), removedCount: doomed.count, entries: entries,
                                               policies: policies.sorted { $0.key < $1.key }.map { .init(collection: $0.key, lsn: $0.value.lsn, policy: $0.value.policy) })
                let record = LogRecord(lsn: lsn, timestamp: dependencies.now(), collection: "", event: .checkpoint(checkpoint))
                try txn.put(state.dbs.log, key: lsn.keyBytes, value: record.checkedEncoding(), append: true)
                try Fold.apply(record, to: state, in: txn)
                try txn.put(state.dbs.meta, key: MetaKey.lastLSN, value: lsn.keyBytes)
                progress?(CompactionProgress(phase: .committing, done: doomed.count, total: doomed.count))
                return (record, doomed.count)
            }
        }
        // The writer takes its next LSN from the store; this keeps `lastLSN` current too.
        _ = try writer.checkForExternalChanges()
        let info = CheckpointInfo(lsn: written.0.lsn, throughLSN: through, throughTime: last.time, writtenAt: written.0.timestamp, keptLSNs: kept.sorted(), removedCount: written.1)
        return CompactionReport(checkpoint: info, removedRecords: written.1, keptRecords: kept.count, entries: entries.count, windowStart: plan.windowStart)
    }

    /// Where the checkpoint goes: the last record before the first one stamped after
    /// `cutoff` (microseconds), looking only after `start`; `hasEvents` is false when every
    /// record it would cover is itself a checkpoint (nothing to gain).
    private static func plan(after start: LSN, cutoff: Int64, log: Database, in txn: borrowing Transaction) throws -> (through: LSN?, hasEvents: Bool, windowStart: LSN?) {
        var through: LSN?
        var hasEvents = false
        var windowStart: LSN?
        try txn.forEach(log, from: start.next.keyBytes) { key, value in
            guard key.count == 8 else { return true }
            // A damaged key stands for its intact record's LSN (``LogPosition``); the fold
            // reports it, and compaction then refuses.
            let lsn = LogPosition(key: key, value: value).lsn
            guard value.count >= 20 else {
                // Unreadable: let the fold report it (compaction then refuses).
                through = lsn
                hasEvents = true
                return true
            }
            var micros: UInt64 = 0
            for i in 12..<20 { micros = micros << 8 | UInt64(value[i]) }
            if Int64(bitPattern: micros) > cutoff {
                windowStart = lsn
                return false
            }
            through = lsn
            if value[1] != EventKind.checkpoint.rawValue { hasEvents = true }
            return true
        }
        return (through, hasEvents, windowStart)
    }

    static func seconds(_ d: Duration) -> TimeInterval {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}

extension Store {
    /// What the self-compaction at open did: nil when none ran (no ``Configuration/compaction``
    /// policy, `onOpen` false, read-only, or fewer than `threshold` LSNs since the last
    /// checkpoint); otherwise its report, or the error that left the log as it was (the
    /// store opened anyway).
    public var openCompaction: Result<CompactionReport, StoreError>? {
        openCompactionResult.withLock { $0 }
    }

    /// Compacts at open when the policy says so (``CompactionPolicy``); never throws.
    func compactOnOpenIfDue() {
        guard let policy = configuration.compaction, policy.onOpen, !isReadOnly else { return }
        let result: Result<CompactionReport, StoreError>
        do {
            let since = try env.read { txn -> UInt64 in
                let through = try state.dbs.latestCheckpoint(in: txn)?.checkpoint.throughLSN ?? .zero
                return try state.dbs.lastLSN(in: txn).rawValue - through.rawValue
            }
            guard since >= UInt64(max(1, policy.threshold)) else { return }
            result = .success(try compact(keeping: policy.keep))
        } catch {
            result = .failure(StoreError(error, doing: "compacting \(displayPath) at open"))
        }
        openCompactionResult.withLock { $0 = result }
    }
}
