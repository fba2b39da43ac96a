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
    /// Loading state, freshness and the last failure, for the UI.
    public let status: Status
    /// The LSN of the last event folded into this collection (``LSN/zero`` if none).
    public let lsn: LSN
    /// The unresolved mutations applied on top of the server's rows, in LSN order.
    public let pendingMutations: [MutationID]
    /// Why some of ``pendingMutations`` are not resolved yet: the ones whose last attempt
    /// could not be sent or got no answer (no base URL, offline, 5xx, …). A pending mutation
    /// absent here has not been tried by this process yet, or is being sent.
    public let waitingMutations: [MutationID: MutationWait]

    public init(collection: String, rows: [Row], syncMark: SyncMark?, status: Status, lsn: LSN, pendingMutations: [MutationID] = [], waitingMutations: [MutationID: MutationWait] = [:]) {
        self.collection = collection
        self.rows = rows
        self.syncMark = syncMark
        self.status = status
        self.lsn = lsn
        self.pendingMutations = pendingMutations
        self.waitingMutations = waitingMutations
    }

    /// Decodes every row as `T`, in order: with ``RowDecoder`` (the same results as a default
    /// `JSONDecoder`, several times faster) when `decoder` has every default setting,
    /// otherwise with `decoder` itself.
    /// - Throws: `DecodingError` from the first row that does not fit `T`.
    public func decodeRows<T: Decodable>(_ type: T.Type = T.self, using decoder: JSONDecoder = JSONDecoder()) throws -> [T] {
        guard decoder.hasDefaultSettings else { return try rows.map { try decoder.decode(T.self, from: $0.json) } }
        let fast = RowDecoder()
        return try rows.map { try fast.decode(T.self, from: $0.json) }
    }

    /// The rows decoded as `T` on access, for a view that shows only some of them: element
    /// `i` is `Result { try rows[i].decode(T.self) }` (``RowDecoder``), decoded each time it
    /// is read.
    public func lazyRows<T: Decodable>(_ type: T.Type = T.self) -> LazyMapSequence<[Row], Result<T, any Error>> {
        rows.lazy.map { row in Result { try RowDecoder().decode(T.self, from: row.json) } }
    }

    /// What a UI shows besides the rows.
    public enum Status: Sendable, Hashable {
        /// No rows and no fetch has happened.
        case empty
        /// No rows yet and a fetch is in flight.
        case loading
        /// Rows are within their freshness lifetime (or the collection is local-only).
        case fresh
        /// Rows are older than their freshness lifetime, or were invalidated.
        case stale
        /// Rows are shown while a fetch is in flight.
        case refreshing
        /// The last fetch attempt failed; the cached rows are still shown.
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
