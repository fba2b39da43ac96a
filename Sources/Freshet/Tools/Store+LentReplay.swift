import Foundation
import FreshetLMDB

/// A collection of a ``LentReplay``: what a ``Snapshot`` of ``Store/replay(to:collections:policy:)``
/// holds, but rows counted rather than made (``LentReplay/forEachRow(of:_:)`` lends them).
package struct LentSnapshot {
    package let collection: String
    package let syncMark: SyncMark?
    /// As ``Snapshot/status``: judged with ``QueryState/derive(rows:mark:policy:now:isFetching:)``,
    /// which looks only at whether there are rows.
    package let status: Snapshot.Status
    package let lsn: LSN
    package let pendingMutations: [MutationID]
    /// The rows ``LentReplay/forEachRow(of:_:)`` lends.
    package let rowCount: Int
    /// Where the rows are: in the replayed `rows` table under this prefix, or made (a pending
    /// mutation touches the collection: its overlay is applied as ``Store/replay`` applies it).
    fileprivate let rows: Rows

    fileprivate enum Rows {
        case table(prefix: [UInt8])
        case projected([Row])
    }
}

/// The projection of ``Store/replay(to:collections:policy:)`` with each collection's rows left
/// in the replayed tables: `freshet replay` prints them from there (the ID and JSON bytes of each
/// stored row), so a replay of 135,100 rows makes and frees no `Row`, `String` or `Data` for them.
/// The rows of a collection a pending mutation touches are made, overlay applied, as before.
/// Valid only inside ``Store/withLentReplay(to:collections:policy:_:)``'s body.
package final class LentReplay {
    package let lsn: LSN
    package let time: Date?
    package let snapshots: [LentSnapshot]
    package let pending: [PendingMutationInfo]
    package let problems: [StoreProblem]
    package let recordCount: Int
    package let checkpoint: CheckpointInfo?
    /// The replayed state the rows are lent from; taken (nil) when the body has returned.
    private var scratch: ScratchState?
    /// The store's path as errors name it.
    private let displayPath: String

    fileprivate init(lsn: LSN, time: Date?, snapshots: [LentSnapshot], pending: [PendingMutationInfo], problems: [StoreProblem],
                     recordCount: Int, checkpoint: CheckpointInfo?, scratch: ScratchState, displayPath: String) {
        self.lsn = lsn
        self.time = time
        self.snapshots = snapshots
        self.pending = pending
        self.problems = problems
        self.recordCount = recordCount
        self.checkpoint = checkpoint
        self.scratch = scratch
        self.displayPath = displayPath
    }

    /// Lends `snapshot`'s rows in order (by position), each as its ID's UTF-8 and its JSON,
    /// valid for the call only. A row's bytes are exactly those of the ``Row`` that
    /// ``Store/replay(to:collections:policy:)`` makes of it.
    /// - Throws: ``ToolError/store`` for a stored row that does not decode (checked already
    ///   when the rows were counted, so not thrown after that).
    package func forEachRow(of snapshot: LentSnapshot, _ body: (_ id: UnsafeRawBufferPointer, _ json: UnsafeRawBufferPointer) -> Void) throws(ToolError) {
        do {
            try lend(snapshot, body)
        } catch {
            throw ToolError.wrapping(error, doing: "replaying \(displayPath)")
        }
    }

    private func lend(_ snapshot: LentSnapshot, _ body: (_ id: UnsafeRawBufferPointer, _ json: UnsafeRawBufferPointer) -> Void) throws {
        switch snapshot.rows {
        case .projected(let rows):
            for row in rows {
                var id = row.id
                id.withUTF8 { id in row.json.withUnsafeBytes { json in body(UnsafeRawBufferPointer(id), json) } }
            }
        case .table(let prefix):
            guard let scratch else { preconditionFailure("LentReplay.forEachRow after withLentReplay returned") }
            try Self.forEachStoredRow(in: scratch, prefix: prefix) { value, id in
                body(UnsafeRawBufferPointer(rebasing: value[id]), UnsafeRawBufferPointer(rebasing: value[id.upperBound...]))
            }
        }
    }

    /// Hands over the replayed state (nothing is lent after this).
    fileprivate func takeScratch() -> ScratchState? {
        defer { scratch = nil }
        return scratch
    }

    /// Every row of the collection whose key prefix is `prefix` in the replayed `rows` table, in
    /// key order: the stored value and the range of its ID (``MaterializedState/rowIDRange(_:)``,
    /// which throws what ``MaterializedState/decodeRow(_:)`` throws). Only keys of prefix ‖ 8 bytes
    /// are rows: another key under the prefix (a per-collection entry that is not a row) is skipped.
    static func forEachStoredRow(in scratch: ScratchState, prefix: [UInt8],
                                             _ body: (_ value: UnsafeRawBufferPointer, _ id: Range<Int>) -> Void) throws {
        var failure: (any Error)?
        try scratch.tables.forEach(scratch.state.dbs.rows, from: prefix) { key, value in
            guard key.starts(with: prefix) else { return false }
            guard key.count == prefix.count + 8 else { return true }
            do {
                body(value, try MaterializedState.rowIDRange(value))
            } catch {
                failure = error
                return false
            }
            return true
        }
        if let failure { throw failure }
    }
}

extension Store {
    /// ``replay(to:collections:policy:)`` with the rows lent from the replayed tables
    /// (``LentReplay``) to `body`; the same collections, marks, statuses, pending mutations,
    /// problems and rows, byte for byte. The replayed state is freed on a thread of its own
    /// after `body` returns (``ScratchState/releaseInBackground(_:)``).
    ///
    /// - Throws: what ``replay(to:collections:policy:)`` throws, before `body` is called; or
    ///   what `body` throws.
    package func withLentReplay<T>(to point: ReplayPoint = .end, collections: CollectionFilter = .all, policy: FreshnessPolicy? = nil,
                                   _ body: (LentReplay) throws(ToolError) -> T) throws(ToolError) -> T {
        let replay: LentReplay
        do {
            replay = try lentReplay(to: point, collections: collections, policy: policy)
        } catch {
            throw ToolError.wrapping(error, doing: "replaying \(displayPath)")
        }
        // Taken out first, so the freeing thread holds the state's last reference.
        defer { if let scratch = replay.takeScratch() { ScratchState.releaseInBackground(scratch) } }
        return try body(replay)
    }

    private func lentReplay(to requested: ReplayPoint, collections filter: CollectionFilter, policy: FreshnessPolicy?) throws -> LentReplay {
        let (folder, now, judging) = try fold(to: requested, policy: policy)
        let scratch = folder.scratch
        let overlay = PendingOverlay()
        let txn = scratch.tables
        let state = scratch.state
        let proposals = try overlay.pending(state: state, in: txn)
        let judgedAt = now ?? Date(timeIntervalSince1970: 0)
        var snapshots: [LentSnapshot] = []
        for name in try state.collections(in: txn) where filter.matches(name) {
            let mark = try state.syncMark(name, in: txn)
            let rows: LentSnapshot.Rows
            let count: Int
            var mutations: [MutationID] = []
            if proposals.contains(where: { $0.proposal.mutation.ops.contains { $0.collection == name } }) {
                // As ``Store/projection(of:collections:policy:now:)`` makes them.
                let base = mark?.noStore == true ? [] : try state.rows(name, in: txn)
                let projected = try overlay.apply(to: base, collection: name, state: state, in: txn)
                rows = .projected(projected.rows)
                count = projected.rows.count
                mutations = projected.mutations
            } else if mark?.noStore == true {
                rows = .projected([])
                count = 0
            } else {
                // Counted, and checked as `state.rows` would decode them, before anything is printed.
                let prefix = Keys.collection(name)
                var n = 0
                try LentReplay.forEachStoredRow(in: scratch, prefix: prefix) { _, _ in n += 1 }
                rows = .table(prefix: prefix)
                count = n
            }
            let query = QueryState.derive(hasRows: count > 0, mark: mark, policy: judging(name), now: judgedAt, isFetching: false)
            snapshots.append(LentSnapshot(collection: name, syncMark: mark, status: Snapshot.Status(summarizing: query), lsn: mark?.lastLSN ?? .zero,
                                          pendingMutations: mutations, rowCount: count, rows: rows))
        }
        let pending = proposals.map { lsn, proposal in
            var collections: [String] = []
            for op in proposal.mutation.ops where !collections.contains(op.collection) { collections.append(op.collection) }
            return PendingMutationInfo(lsn: lsn, id: proposal.id, name: proposal.mutation.name, queue: proposal.mutation.queue, collections: collections)
        }
        return LentReplay(lsn: folder.lastFolded?.lsn ?? .zero, time: now, snapshots: snapshots, pending: pending, problems: folder.problems,
                          recordCount: folder.recordCount, checkpoint: folder.checkpoint, scratch: scratch, displayPath: displayPath)
    }
}

extension ScratchState {
    /// Frees the replayed state on a thread of its own, so a tool returns without waiting for
    /// it: its tables hold an array per key (270,000 on W5), and freeing them was a quarter of
    /// `verify`'s time after the fold (docs/performance.md, "Issue 8 speed round 5 (verify)")
    /// and 101 M instructions of `replay`'s calling thread. Only memory is freed there; the
    /// scratch state holds no store. The caller must hold no other reference to `scratch`
    /// once this returns, or the last release (the freeing) happens where that one ends.
    static func releaseInBackground(_ scratch: consuming ScratchState) {
        let box = ReleaseBox(scratch)
        let thread = Thread { box.scratch = nil }
        thread.name = "freshet.release"
        thread.start()
    }
}

/// Carries the replayed state to the thread that frees it (``ScratchState/releaseInBackground(_:)``).
private final class ReleaseBox: @unchecked Sendable {
    // `@unchecked`: set once here, then only cleared, on the freeing thread.
    var scratch: ScratchState?

    init(_ scratch: consuming ScratchState) {
        self.scratch = scratch
    }
}
