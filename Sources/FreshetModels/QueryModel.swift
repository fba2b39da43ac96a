import Foundation
import Freshet
import Observation

/// An `@Observable` query a SwiftUI view holds: the rows of one ``QueryDefinition``'s
/// collection decoded as `Value`, the query state beside them, and `refresh()` — what
/// TanStack Query's `useQuery` returns, as a model object.
///
/// ```swift
/// @MainActor let todos = QueryModel(Queries.todos, store: store)
/// // todos.rows: [IdentifiedRow<Todo>], in the collection's order (server order)
/// // todos.state: QueryState (data, fetch, isStale, error, dataUpdatedAt …)
/// await todos.refresh()          // pull to refresh: returns when the response is folded
/// ```
///
/// **Lifecycle.** Making the model starts observing the collection
/// (``Freshet/Store/observe(_:)-(Resource)``): the stored rows show at once (also offline),
/// and a stale collection is refreshed in the background, as `useQuery` does on mount.
/// Releasing the model stops the observation (its `deinit` cancels the task; the store drops
/// the observer). Everything is committed by the store, not the model: a refresh or an
/// invalidation in flight when the model goes away still lands in the log.
///
/// **Decoding.** Rows are decoded off the main actor and only when they changed: a row with
/// the same ID and the same stored bytes as in the previous snapshot keeps its decoded
/// value. ``rows`` is assigned only when a row was decoded anew or the order or set of IDs
/// changed, and ``state`` only when the query state changed, so a view reading ``rows`` is
/// not invalidated by a fetch starting or a 304.
///
/// **Schema drift.** A stored row that does not decode as `Value` (stored by an older app
/// version, or the server changed its shape) does not blank the list: ``rows`` holds the rows
/// that decode, ``decodingErrors`` names each row that does not (collection, row ID, coding
/// path), and the model invalidates the collection once, so the store refetches it. Rows that
/// still fail after the refetch stay in ``decodingErrors``; the model does not refetch again.
/// See docs/swiftui.md, "Schema drift".
@MainActor
@Observable
public final class QueryModel<Value: Decodable & Sendable> {
    /// The declaration this model shows.
    @ObservationIgnored public let definition: QueryDefinition<Value>
    @ObservationIgnored public let store: Store

    /// The rows that decode as `Value`, in the collection's order (server order for lists;
    /// pending optimistic rows included, with their provisional IDs). Empty before the first
    /// snapshot.
    public private(set) var rows: [IdentifiedRow<Value>] = []
    /// Data, fetch, staleness and error state (``Freshet/QueryState``); before the first
    /// snapshot: empty, idle, stale.
    public private(set) var state = QueryState(data: .empty, isStale: true)
    /// The unresolved mutations shown on top of the server's rows, in LSN order.
    public private(set) var pendingMutations: [MutationID] = []
    /// The stored rows that do not decode as `Value`, in the collection's order: each names
    /// the collection, the row ID, the coding path and why. Empty when every row decodes.
    public private(set) var decodingErrors: [RowDecodingError] = []
    /// The LSN of the last event folded into the collection, as of the snapshot shown; nil
    /// before the first snapshot. Not observed (it moves with every emission, also when
    /// nothing shown changes): read it alongside the properties a view observes.
    @ObservationIgnored public private(set) var lsn: LSN?
    /// Why the model stopped receiving snapshots: code `closed` once the store is closed
    /// (``Freshet/Store/close()``; the rows shown stay), `storage` or another read error when
    /// the store could not be read, or the error of a schema drift invalidation that could
    /// not be appended. Nil while it observes.
    public private(set) var observationError: StoreError?
    /// The LSN of the `invalidated` event this model appended for schema drift, if it did.
    public private(set) var driftInvalidation: LSN?

    @ObservationIgnored private var observation: QueryObservation?
    /// Rows decoded since the model was made (tests and diagnostics: unchanged rows are not decoded again).
    @ObservationIgnored public private(set) var decodeCount = 0

    /// Starts observing `definition`'s collection in `store` (see the lifecycle above).
    public init(_ definition: QueryDefinition<Value>, store: Store) {
        self.definition = definition
        self.store = store
        observation = QueryObservation(store: store, definition: definition) { [weak self] update in
            self?.apply(update)
        }
    }

    deinit {
        // Sendable and set once in init: safe to reach from the nonisolated deinit.
        observation?.cancel()
    }

    /// Whether there are no rows yet and a fetch is running (a first load's spinner).
    public var isLoading: Bool { state.data == .empty && state.fetch == .fetching }
    /// Whether a fetch is running (``QueryState/FetchStatus/fetching``).
    public var isFetching: Bool { state.fetch == .fetching }
    /// The last fetch failure since the last success (``QueryState/error``).
    public var error: SyncMark.FailureInfo? { state.error }

    /// The observation task (tests: awaiting it after releasing the model).
    var observationTask: Task<Void, Never>? { observation?.task }

    func apply(_ update: QueryObservation.Update<Value>) {
        switch update {
        case .snapshot(let snapshot, let decoded):
            decodeCount += decoded.decodeCount
            if decoded.rowsChanged { rows = decoded.rows }
            if decodingErrors != decoded.errors { decodingErrors = decoded.errors }
            if state != snapshot.query { state = snapshot.query }
            if pendingMutations != snapshot.pendingMutations { pendingMutations = snapshot.pendingMutations }
            lsn = snapshot.lsn
        case .driftInvalidated(let lsn):
            driftInvalidation = lsn
        case .failed(let error):
            if observationError != error { observationError = error }
        }
    }
}
