import Foundation
import Freshet
import Observation

/// An `@Observable` infinite list a SwiftUI view holds: the rows of every page loaded so far,
/// decoded as `Value`, the query state, ``hasMore``, ``loadMore()`` for the next page and
/// ``refresh(mode:)`` — TanStack Query's `useInfiniteQuery` (`hasNextPage`,
/// `fetchNextPage`, `isFetchingNextPage`), as a model object.
///
/// ```swift
/// @MainActor let list = InfiniteQueryModel(Queries.pokemon, store: store)
/// // list.rows: [IdentifiedRow<PokemonEntry>], every loaded page in order, each ID once
/// if list.hasMore { await list.loadMore() }     // the next 20; .endReached at the end, nothing sent
/// await list.refresh()                          // revalidates the loaded pages (304s keep them)
/// await list.refresh(mode: .firstPage)          // back to page 1 only, fetched anew
/// ```
///
/// It is a ``QueryModel`` of the declaration's ``InfiniteQueryDefinition/query`` plus paging:
/// the rows, state, decoding (only changed rows are decoded, by row ID and stored bytes),
/// schema drift and lifecycle are that model's, read through here, so a view observing
/// ``rows`` is told exactly what a `QueryModel`'s observer is. Making the model observes the
/// collection (the stored pages show at once, also offline; a stale list is revalidated in
/// the background); releasing it releases the inner model, whose `deinit` ends the observation.
///
/// Requests run in tasks of their own holding the store, not the model: a page asked for just
/// before the view goes away is still committed, and shows in any model of the same list.
@MainActor
@Observable
public final class InfiniteQueryModel<Value: Decodable & Sendable> {
    /// The declaration this model shows.
    @ObservationIgnored public let definition: InfiniteQueryDefinition<Value>
    @ObservationIgnored public let store: Store
    /// The model of the rows and state (not exposed: releasing this model must end the observation).
    @ObservationIgnored private let model: QueryModel<Value>

    /// Whether a ``loadMore()`` of this model is waiting for its page (TanStack's
    /// `isFetchingNextPage`). Not set by a call that finds the list at its end.
    public private(set) var isLoadingMore = false
    /// Why the last ``loadMore()`` failed (a ``Freshet/FetchError``: offline, `pagingLoop`,
    /// `tooManyPages`, `crossOrigin`, `duplicateRowIDs` …); nil after a call that loaded a page or found the end.
    /// The loaded pages are kept either way.
    public private(set) var loadMoreError: FetchError?

    /// The ``loadMore()`` in flight, which later calls join.
    @ObservationIgnored private var loadingMore: Task<Result<LoadMoreResult, FetchError>, Never>?

    /// Starts observing `definition`'s collection in `store` (see ``QueryModel``'s lifecycle).
    public init(_ definition: InfiniteQueryDefinition<Value>, store: Store) {
        self.definition = definition
        self.store = store
        model = QueryModel(definition.query, store: store)
    }

    /// The rows of every loaded page that decode as `Value`, in page order, each row ID once
    /// (pending optimistic rows included). Empty before the first snapshot.
    public var rows: [IdentifiedRow<Value>] { model.rows }
    /// Data, fetch, staleness, error and ``Freshet/QueryState/hasMore`` (``QueryModel/state``).
    public var state: QueryState { model.state }
    /// Whether the last loaded page names a next one (``Freshet/QueryState/hasMore``, from the
    /// SyncMark's last page): false before the first page and after the last one.
    public var hasMore: Bool { model.state.hasMore }
    /// The unresolved mutations shown on top of the server's rows, in LSN order.
    public var pendingMutations: [MutationID] { model.pendingMutations }
    /// The stored rows that do not decode as `Value` (``QueryModel/decodingErrors``).
    public var decodingErrors: [RowDecodingError] { model.decodingErrors }
    /// The LSN the rows reflect; not observed (``QueryModel/lsn``).
    public var lsn: LSN? { model.lsn }
    /// Why the model stopped receiving snapshots (``QueryModel/observationError``).
    public var observationError: StoreError? { model.observationError }
    /// The LSN of the schema drift invalidation the model appended, if it did.
    public var driftInvalidation: LSN? { model.driftInvalidation }
    /// Rows decoded since the model was made (tests and diagnostics).
    public var decodeCount: Int { model.decodeCount }
    /// Whether there are no rows yet and a fetch is running (the first page's spinner).
    public var isLoading: Bool { model.isLoading }
    /// Whether a fetch of the list is running: a refresh, or a page of ``loadMore()``.
    public var isFetching: Bool { model.isFetching }
    /// The last fetch failure since the last success (``Freshet/QueryState/error``).
    public var error: SyncMark.FailureInfo? { model.error }

    /// Appends the next page (the first one when nothing is loaded yet) and returns when it is
    /// committed; the model shows it with the snapshot that follows, delivered asynchronously —
    /// a list's "load more" row or its last cell appearing (TanStack's `fetchNextPage()`).
    ///
    /// Calls while one is in flight join it: one request, the same result for all (the store
    /// also shares one request among the models of one list). Like ``refresh(mode:)`` the
    /// request runs in a task of its own: a cancelled caller or a released model stops the
    /// wait, not the page, which is still committed.
    ///
    /// - Returns: ``Freshet/LoadMoreResult/loaded(_:)`` with the page's summary;
    ///   ``Freshet/LoadMoreResult/endReached`` without any request when the last loaded page
    ///   names no next one, or the declaration has one page (paging `.none`) and it has been
    ///   fetched (the state shown does not change); or the ``Freshet/FetchError`` of
    ///   ``Freshet/Store/loadMore(_:)`` (also in ``loadMoreError``; the loaded pages stay).
    @discardableResult
    public func loadMore() async -> Result<LoadMoreResult, FetchError> {
        if let running = loadingMore { return await running.value }
        let store = self.store
        let resource = definition.resource
        let running = detachedFetch { () async throws(FetchError) in try await store.loadMore(resource) }
        loadingMore = running
        // A list shown at its end asks the store, which answers endReached without a request:
        // no spinner flicker for it. (A list not shown yet, or shown with more, shows one.)
        let showsProgress = hasMore || state.data == .empty
        if showsProgress { isLoadingMore = true }
        let result = await running.value
        loadingMore = nil
        if showsProgress { isLoadingMore = false }
        switch result {
        case .success:
            if loadMoreError != nil { loadMoreError = nil }
        case .failure(let error):
            if loadMoreError != error { loadMoreError = error }
        }
        return result
    }

    /// Fetches the list from the network now and returns when it is committed (pull to
    /// refresh; ``QueryModel/refresh(mode:)``, which it is).
    ///
    /// - Parameter mode: ``Freshet/RefreshMode/revalidate`` (default): the pages loaded so far,
    ///   in order, each with its own validators (a 304 keeps a page), and no more pages;
    ///   ``Freshet/RefreshMode/reload``: the same pages, unconditionally;
    ///   ``Freshet/RefreshMode/firstPage``: drops every page after the first and fetches the
    ///   first anew (TanStack's `resetQueries`); later pages come back with ``loadMore()``.
    @discardableResult
    public func refresh(mode: RefreshMode = .revalidate) async -> Result<RefreshSummary, FetchError> {
        await model.refresh(mode: mode)
    }

    /// The observation task (tests: awaiting it after releasing the model).
    var observationTask: Task<Void, Never>? { model.observationTask }
}
