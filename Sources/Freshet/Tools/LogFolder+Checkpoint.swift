import Foundation
import FreshetLMDB

extension LogFolder {
    /// Loads the latest checkpoint's state into the scratch store, with the records it kept
    /// (proposals the fold and the overlay read back), so folding continues after its
    /// `throughLSN`. Returns nil for a log that was never compacted.
    ///
    /// A kept record that is missing or unreadable is a problem (reported, skipped), as a
    /// damaged record is anywhere else.
    func loadLatestCheckpoint() throws(StoreError) -> (info: CheckpointInfo, policies: [Event.Checkpoint.RecordedPolicy], problems: [StoreProblem])? {
        let found: (LogRecord, Event.Checkpoint, [(LSN, [UInt8])], [StoreProblem])?
        do {
            found = try store.env.read { txn in
                guard let (record, checkpoint) = try store.state.dbs.latestCheckpoint(in: txn) else { return nil }
                var kept: [(LSN, [UInt8])] = []
                var problems: [StoreProblem] = []
                for lsn in checkpoint.keptLSNs {
                    guard let bytes = try txn.get(store.state.dbs.log, key: lsn.keyBytes) else {
                        problems.append(StoreProblem(database: "log", lsn: lsn, message: "the checkpoint at LSN \(record.lsn) kept LSN \(lsn), which is missing"))
                        continue
                    }
                    do throws(StoreError) {
                        _ = try LogRecord.decode(bytes, expectedLSN: lsn)
                        kept.append((lsn, bytes))
                    } catch {
                        problems.append(StoreProblem(database: "log", lsn: lsn, message: error.message))
                    }
                }
                return (record, checkpoint, kept, problems)
            }
        } catch {
            throw StoreError(error, doing: "reading the checkpoint of \(store.displayPath)")
        }
        guard let (record, checkpoint, kept, problems) = found else { return nil }
        try scratch.load(checkpoint, keptRecords: kept)
        var info = CheckpointInfo(lsn: record.lsn, throughLSN: checkpoint.throughLSN, throughTime: checkpoint.throughTime, writtenAt: record.timestamp,
                                  keptLSNs: checkpoint.keptLSNs, removedCount: checkpoint.removedCount)
        info.keepsPolicies = checkpoint.policies != nil
        return (info, checkpoint.policies ?? [], problems)
    }

    /// The point `replay` and `why` fold to: `.end` becomes the last LSN when they start
    /// (records an app appends meanwhile are left out), checked as ``checkReachable(_:)``
    /// checks. An LSN the log does not hold before its end is reachable: the fold stops
    /// before it and reports it missing (``LSNContinuity``).
    /// - Throws: ``ToolError/pastEnd`` for an LSN after the last record, naming it and the
    ///   last LSN; ``ToolError/beforeCheckpoint``.
    func reachablePoint(_ requested: ReplayPoint) throws -> ReplayPoint {
        // The last LSN assigned: records lost at the end of the log are missing, not past it.
        let last = try Self.logEnd(of: store).assigned
        let point: ReplayPoint = if case .end = requested, last > .zero { .lsn(last) } else { requested }
        if case .lsn(let lsn) = point, lsn > last {
            throw ToolError(.pastEnd, "LSN \(lsn) is past the end of the log of \(store.displayPath) (last LSN \(last))")
        }
        try checkReachable(point)
        return point
    }

    /// Refuses a replay point the compacted log can no longer reach: an LSN before the
    /// checkpoint's `throughLSN`, or a time before the millisecond of its `throughTime`.
    /// - Throws: ``ToolError/beforeCheckpoint``, naming the checkpoint.
    func checkReachable(_ point: ReplayPoint) throws(ToolError) {
        guard let checkpoint else { return }
        switch point {
        case .end:
            return
        case .lsn(let lsn) where lsn < checkpoint.throughLSN:
            throw ToolError(.beforeCheckpoint, "LSN \(lsn) is before the \(checkpoint) of \(store.displayPath): compaction removed the records up to LSN \(checkpoint.throughLSN); ask for LSN \(checkpoint.throughLSN) or later")
        // At the millisecond the tools print, as `--at` compares records (ReplayPoint.isAfter):
        // the through-time copied from the checkpoint's description reaches its state, as
        // `--to throughLSN` does (trial finding 7).
        case .time(let time) where ReplayPoint.isAfter(checkpoint.throughTime, time):
            throw ToolError(.beforeCheckpoint, "\(LogRecord.iso8601(time)) is before the \(checkpoint) of \(store.displayPath): compaction removed the history before it")
        default:
            return
        }
    }

    /// The time of the last event folded, at which `replay` and `why` judge statuses when no
    /// time is asked for: the last folded record's, except that a checkpoint record stands for
    /// the state through its `throughLSN`, so it counts as its ``CheckpointInfo/throughTime``,
    /// not as the time the compaction ran. A compaction then changes no status within the
    /// window it keeps (trial finding 7; issue 8: compact → replay equals before). Nil before
    /// anything was folded.
    var lastEventTime: Date? {
        guard let last = lastFolded else { return nil }
        if let checkpoint, last.lsn == checkpoint.lsn { return checkpoint.throughTime }
        return last.time
    }
}
