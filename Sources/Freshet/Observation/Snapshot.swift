import Foundation

/// One emission of an observed collection: its projection at one point of the log — the
/// server's rows (the confirmed base) with every unresolved mutation applied on top, in LSN
/// order (the pending overlay).
public struct Snapshot: Sendable, Hashable {
    /// The collection's name.
    public let collection: String
    /// The rows, in the collection's order (server order for lists and pages; upserted rows
    /// follow in the order they first arrived). No ID appears twice.
    public let rows: [Row]
    /// What the collection knows about its last sync; nil when no event has touched it.
    public let syncMark: SyncMark?
    /// Data, fetch, staleness and error state, each on its own (see ``QueryState`` and
    /// docs/queries.md). Prefer it to ``status``.
    public let query: QueryState
    /// One summary of loading state, freshness and the last failure, derived from the same
    /// SyncMark as ``query``: kept for source compatibility. It mixes three things (a
    /// `failed` status hides that the rows are fresh); new code reads ``query``.
    public let status: Status
    /// The LSN of the last event folded into this collection (``LSN/zero`` if none).
    public let lsn: LSN
    /// The unresolved mutations applied on top of the server's rows, in LSN order.
    public let pendingMutations: [MutationID]
    /// Why some of ``pendingMutations`` are not resolved yet: the ones whose last attempt
    /// could not be sent or got no answer (no base URL, offline, 5xx, …). A pending mutation
    /// absent here has not been tried by this process yet, or is being sent.
    public let waitingMutations: [MutationID: MutationWait]

    /// Without `query`, the query state is read off `status` (``QueryState/init(status:rows:mark:)``).
    public init(collection: String, rows: [Row], syncMark: SyncMark?, status: Status, query: QueryState? = nil, lsn: LSN,
                pendingMutations: [MutationID] = [], waitingMutations: [MutationID: MutationWait] = [:]) {
        self.collection = collection
        self.rows = rows
        self.syncMark = syncMark
        self.status = status
        self.query = query ?? QueryState(status: status, rows: rows, mark: syncMark)
        self.lsn = lsn
        self.pendingMutations = pendingMutations
        self.waitingMutations = waitingMutations
    }

    /// Decodes every row as `T`, in order: with ``RowDecoder`` (the same results as a default
    /// `JSONDecoder`, several times faster) when `decoder` has every default setting,
    /// otherwise with `decoder` itself.
    /// - Throws: ``RowDecodingError`` for the first row that does not fit `T`, naming the
    ///   collection, the row ID and the coding path.
    public func decodeRows<T: Decodable>(_ type: T.Type = T.self, using decoder: JSONDecoder = JSONDecoder()) throws -> [T] {
        try decodeEach(T.self, using: decoder) { _, value in value }
    }

    /// Decodes every row as `T`, in order, each with its row ID: `[(id, value)]` as
    /// ``IdentifiedRow`` values (`Identifiable` by the row ID). Decoding as in
    /// ``decodeRows(_:using:)``.
    ///
    /// ```swift
    /// ForEach(try snapshot.decodeIdentifiedRows(Todo.self)) { row in Text(row.value.title) }  // row.id: "p-1…" while pending
    /// ```
    /// - Throws: ``RowDecodingError`` for the first row that does not fit `T`.
    public func decodeIdentifiedRows<T: Decodable>(_ type: T.Type = T.self, using decoder: JSONDecoder = JSONDecoder()) throws(RowDecodingError) -> [IdentifiedRow<T>] {
        try decodeEach(T.self, using: decoder) { i, value in IdentifiedRow(id: rows[i].id, value: value) }
    }

    /// `element(i, value)` for every row `i` in order, its JSON decoded as `T`: by one
    /// ``TapeDecoder`` reused row after row (one tape, one path) when `decoder` has every
    /// default setting, otherwise by `decoder`. The array is filled in place: appending to it
    /// from this generic function looked up the array's type metadata per row (3% of W3;
    /// docs/performance.md, round 7), and each value is moved into it, not copied.
    private func decodeEach<T: Decodable, Element>(_ type: T.Type, using decoder: JSONDecoder, _ element: (Int, consuming T) -> Element) throws(RowDecodingError) -> [Element] {
        let fast = decoder.hasDefaultSettings ? TapeDecoder() : nil
        var failure: RowDecodingError?
        let result = [Element](unsafeUninitializedCapacity: rows.count) { buffer, count in
            for i in 0..<rows.count {
                do {
                    let value = if let fast { try fast.decodeRow(T.self, from: rows[i].json) } else { try decoder.decode(T.self, from: rows[i].json) }
                    buffer.initializeElement(at: i, to: element(i, value))
                    count = i + 1
                } catch {
                    failure = RowDecodingError(collection: collection, rowID: rows[i].id, type: T.self, underlying: error)
                    return
                }
            }
        }
        if let failure { throw failure }
        return result
    }

    /// The rows decoded as `T` on access, for a view that shows only some of them: element
    /// `i` is `Result { try rows[i].decode(T.self) }` (``RowDecoder``), decoded each time it
    /// is read.
    public func lazyRows<T: Decodable>(_ type: T.Type = T.self) -> LazyMapSequence<[Row], Result<T, any Error>> {
        rows.lazy.map { row in Result { try RowDecoder().decode(T.self, from: row.json) } }
    }

    /// What a UI shows besides the rows: one word summarizing ``query``, derived from it by
    /// ``init(summarizing:)`` so the two never disagree. Offline (``QueryState/FetchStatus/paused``)
    /// is not `failed`; read ``query`` for it.
    public enum Status: Sendable, Hashable {
        /// No rows, and none ever confirmed by a server, and no fetch in flight.
        case empty
        /// No rows yet and a fetch is in flight.
        case loading
        /// Rows are within their freshness lifetime (or the collection is local-only).
        case fresh
        /// Rows are older than their freshness lifetime, or were invalidated.
        case stale
        /// Rows are shown while a fetch is in flight.
        case refreshing
        /// The last fetch attempt failed (``QueryState/error``; never a `cannotConnect`, which
        /// pauses); the cached rows are still shown.
        /// `lastSyncedAt` is when the rows were last confirmed by the server (nil: never).
        case failed(error: SyncMark.FailureInfo, lastSyncedAt: Date?)
    }
}

extension Snapshot.Status: CustomStringConvertible {
    /// `fresh`, `stale`, … or `failed (cannotConnect), last synced 2026-11-29T14:24:14.716Z`.
    public var description: String {
        switch self {
        case .empty: "empty"
        case .loading: "loading"
        case .fresh: "fresh"
        case .stale: "stale"
        case .refreshing: "refreshing"
        case .failed(let error, let lastSyncedAt):
            "failed (\(error.reason)\(error.status.map { " \($0)" } ?? "")), last synced \(lastSyncedAt.map(LogRecord.iso8601) ?? "never")"
        }
    }
}
