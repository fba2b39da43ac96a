import Foundation
import FreshetLMDB

extension Store {
    /// Rebuilds the projection at `point` by folding the log from its first record (after a
    /// compaction: from the latest checkpoint's state, ``Replay/checkpoint``) into a scratch
    /// store with the same ``Fold`` the store uses; the store itself is only read.
    ///
    /// ```swift
    /// let past = try store.replay(to: .lsn(42), collections: .prefix("pokemon/"))
    /// for snapshot in past.snapshots { print(snapshot.collection, snapshot.rows.count) }
    /// ```
    ///
    /// - Parameters:
    ///   - collections: which collections to report (all are folded: a mutation may touch several).
    ///   - policy: the freshness policy statuses are judged under (at the `--at` time, else at
    ///     the time of the last event folded: a checkpoint counts as its through-time, so a
    ///     compaction changes no status); when nil, each collection's
    ///     is the one its last refresh recorded (``ReadPolicy``), else the store's default.
    /// Unreadable records and missing LSNs are skipped and listed in ``Replay/problems``
    /// (``LSNContinuity``): `.lsn(4)` of a log missing LSN 4 replays through LSN 3.
    ///
    /// - Throws: ``ToolError/beforeCheckpoint`` for an LSN or time the compacted log no longer
    ///   holds, ``ToolError/pastEnd`` for an LSN after the last record,
    ///   ``ToolError/beforeFirstRecord`` for a time before the first record, ``ToolError/store``
    ///   when the log or the scratch store cannot be read or written.
    public func replay(to point: ReplayPoint = .end, collections: CollectionFilter = .all, policy: FreshnessPolicy? = nil) throws(ToolError) -> Replay {
        do {
            return try replayUntyped(to: point, collections: collections, policy: policy)
        } catch {
            throw ToolError.wrapping(error, doing: "replaying \(displayPath)")
        }
    }

    private func replayUntyped(to requested: ReplayPoint, collections: CollectionFilter, policy: FreshnessPolicy?) throws -> Replay {
        let (folder, now, judging) = try fold(to: requested, policy: policy)
        return try Self.projection(of: folder, collections: collections, policy: judging, now: now)
    }

    /// Folds the log up to `requested` (the work of ``replay(to:collections:policy:)`` before
    /// its projection): the folder, the time statuses are judged at, and each collection's policy.
    func fold(to requested: ReplayPoint, policy: FreshnessPolicy?) throws -> (LogFolder, now: Date?, policy: (String) -> FreshnessPolicy) {
            try checkOpen()
            let folder = try LogFolder(store: self)
            let point = try folder.reachablePoint(requested)
            try folder.run(to: point)
            if case .time(let time) = point, folder.lastFolded == nil {
                let first = try firstRecordTime()
                let detail = first.map { " (first record: LSN \($0.lsn) at \(LogRecord.iso8601($0.time)))" } ?? " (the log is empty)"
                throw ToolError(.beforeFirstRecord, "\(LogRecord.iso8601(time)) is before the first record of \(displayPath)\(detail)")
            }
            let now: Date? = switch point {
            case .time(let time): ReplayPoint.judgingTime(asked: time, lastTaken: folder.lastEventTime)
            default: folder.lastEventTime
            }
            let fallback = configuration.defaultFreshness
            let recorded = try folder.policies()
            return (folder, now, { policy ?? recorded[$0]?.policy.freshness ?? fallback })
    }

    private func firstRecordTime() throws -> (lsn: LSN, time: Date)? {
        var first: (LSN, Date)?
        try readLog { entry in
            if case .record(let r) = entry { first = (r.lsn, r.timestamp) }
            return first == nil
        }
        return first
    }

    /// Reads the folded scratch state as a ``Replay``.
    static func projection(of folder: LogFolder, collections filter: CollectionFilter, policy: (String) -> FreshnessPolicy, now: Date?) throws -> Replay {
        let scratch = folder.scratch
        let overlay = PendingOverlay()
        let txn = scratch.tables
        let state = scratch.state
        var snapshots: [Snapshot] = []
        for name in try state.collections(in: txn) where filter.matches(name) {
            let mark = try state.syncMark(name, in: txn)
            let base = mark?.noStore == true ? [] : try state.rows(name, in: txn)
            let projected = try overlay.apply(to: base, collection: name, state: state, in: txn)
            let judgedAt = now ?? Date(timeIntervalSince1970: 0)
            let query = QueryState.derive(rows: projected.rows, mark: mark, policy: policy(name), now: judgedAt, isFetching: false)
            let status = Snapshot.Status(summarizing: query)
            snapshots.append(Snapshot(collection: name, rows: projected.rows, syncMark: mark, status: status, query: query, lsn: mark?.lastLSN ?? .zero,
                                      pendingMutations: projected.mutations))
        }
        let pending = try overlay.pending(state: state, in: txn).map { lsn, proposal in
            var collections: [String] = []
            for op in proposal.mutation.ops where !collections.contains(op.collection) { collections.append(op.collection) }
            return PendingMutationInfo(lsn: lsn, id: proposal.id, name: proposal.mutation.name, queue: proposal.mutation.queue, collections: collections)
        }
        var replay = Replay(lsn: folder.lastFolded?.lsn ?? .zero, time: now, snapshots: snapshots, pending: pending, problems: folder.problems, recordCount: folder.recordCount)
        replay.checkpoint = folder.checkpoint
        return replay
    }
}
