import Foundation

/// What a screen shows besides the rows, kept apart as TanStack Query keeps it: whether there
/// is data and how old it is, whether a fetch is running or paused, whether the rows are stale
/// under the policy and when they become so, and the last error — each on its own, so an
/// error never hides that the rows are fresh, and a fetch never hides that they are stale.
///
/// Derived when a snapshot is read, from the collection's ``SyncMark``, its freshness policy,
/// the store's clock and the fetches in flight (nothing here is stored on its own; a relaunch
/// derives the same values from the same SyncMark). The state machine is drawn in
/// docs/queries.md.
///
/// ```swift
/// for try await snapshot in store.observe(pokemon) {
///     let q = snapshot.query
///     list.rows = try snapshot.decodeIdentifiedRows(Pokemon.self)
///     spinner.isVisible = q.fetch == .fetching && q.data == .empty
///     offlineBadge.isVisible = q.fetch == .paused
///     errorBanner.text = q.error?.message        // nil once a later fetch succeeds
///     updatedLabel.date = q.dataUpdatedAt         // "updated 2 min ago"
/// }
/// ```
public struct QueryState: Sendable, Hashable {
    /// Whether the projection has rows.
    public enum DataStatus: Sendable, Hashable {
        /// No rows (never fetched, or the server sent none, or all were removed).
        case empty
        /// At least one row, shown whatever the fetch and error state.
        case hasRows
    }

    /// What the network side is doing for this collection.
    public enum FetchStatus: Sendable, Hashable {
        /// No fetch is in flight.
        case idle
        /// A refresh is in flight (including its retry backoff).
        case fetching
        /// The last attempt could not connect (`cannotConnect`): the store is waiting for
        /// ``Store/networkDidBecomeReachable()`` or ``Store/didBecomeActive()`` to try again,
        /// without backoff. Offline is not an error: ``QueryState/error`` stays nil for it.
        case paused
    }

    /// Whether the projection has rows.
    public var data: DataStatus
    /// When the server last confirmed the rows (a 2xx or a 304: ``SyncMark/validatedAt``);
    /// nil when no fetch has succeeded (local-only rows).
    public var dataUpdatedAt: Date?
    /// Whether a fetch is running, paused while offline, or neither.
    public var fetch: FetchStatus
    /// Whether the rows are stale under the collection's ``FreshnessPolicy`` now (the verdict
    /// ``Store/refreshIfNeeded(_:)`` acts on). A never-fetched collection with local rows is
    /// not stale unless invalidated; a never-fetched empty one is.
    public var isStale: Bool
    /// When fresh rows become stale under the policy (`.maxAge`: `dataUpdatedAt + d`; `.http`:
    /// RFC 9111 §4.2 `response_time + lifetime − corrected_initial_age`); nil when time never
    /// makes them stale (`.manual`, local-only rows) or they are stale already for another
    /// reason (`.always`, never fetched, invalidated). When stale by age it is the past
    /// instant they became so.
    public var staleAt: Date?
    /// The last failure since the last success, unless it was only that the network could not
    /// be reached (then ``fetch`` is ``FetchStatus/paused``). Cleared by the next 2xx or 304;
    /// ``Store/didBecomeActive()`` and ``Store/networkDidBecomeReachable()`` refetch every
    /// observed collection that has one.
    public var error: SyncMark.FailureInfo?
    /// When ``error`` was recorded (the `fetchFailed` event's time); nil without an error.
    public var errorUpdatedAt: Date?
    /// Failed attempts since the last success (``SyncMark/consecutiveFailures``), offline
    /// attempts included.
    public var failureCount: Int
    /// Whether the server named a page after the last page the collection holds: a `next`
    /// URL, a `Link` `rel="next"` (RFC 8288) or a cursor in the last loaded page — never
    /// guessed from a row count. ``Store/loadMore(_:)`` fetches it; false for unpaged
    /// collections, before the first page, and once the last page is loaded.
    public var hasMore: Bool

    public init(data: DataStatus, dataUpdatedAt: Date? = nil, fetch: FetchStatus = .idle, isStale: Bool, staleAt: Date? = nil,
                error: SyncMark.FailureInfo? = nil, errorUpdatedAt: Date? = nil, failureCount: Int = 0, hasMore: Bool = false) {
        self.hasMore = hasMore
        self.data = data
        self.dataUpdatedAt = dataUpdatedAt
        self.fetch = fetch
        self.isStale = isStale
        self.staleAt = staleAt
        self.error = error
        self.errorUpdatedAt = errorUpdatedAt
        self.failureCount = failureCount
    }

    /// The query state of `rows` with `mark` under `policy` at `now`; `isFetching` when a
    /// refresh of the collection is in flight. The live store and `replay` both use it.
    public static func derive(rows: [Row], mark: SyncMark?, policy: FreshnessPolicy, now: Date, isFetching: Bool) -> QueryState {
        derive(hasRows: !rows.isEmpty, mark: mark, policy: policy, now: now, isFetching: isFetching)
    }

    /// ``derive(rows:mark:policy:now:isFetching:)`` for a collection that has rows or not: the
    /// rows matter only by whether there are any, so `replay` judges a collection it prints
    /// straight from the replayed tables without making its rows.
    static func derive(hasRows: Bool, mark: SyncMark?, policy: FreshnessPolicy, now: Date, isFetching: Bool) -> QueryState {
        let data: DataStatus = hasRows ? .hasRows : .empty
        guard let mark else {
            return QueryState(data: data, fetch: isFetching ? .fetching : .idle, isStale: !hasRows)
        }
        let failing = mark.consecutiveFailures > 0 ? mark.lastError : nil
        let offline = failing.map { $0.reason == FetchError.Code.cannotConnect.rawValue } ?? false
        let fetch: FetchStatus = isFetching ? .fetching : offline ? .paused : .idle
        let isStale: Bool
        var staleAt: Date?
        if mark.validatedAt == nil {
            // Never confirmed by a server: local-only rows are fresh until invalidated.
            isStale = mark.invalidatedAt != nil || !hasRows
        } else {
            let verdict = Freshness.evaluate(mark, policy: policy, now: now)
            isStale = verdict.isStale
            if mark.invalidatedAt == nil, policy != .always { staleAt = verdict.freshUntil }
        }
        let error = offline ? nil : failing
        return QueryState(data: data, dataUpdatedAt: mark.validatedAt, fetch: fetch, isStale: isStale, staleAt: staleAt,
                          error: error, errorUpdatedAt: error == nil ? nil : mark.lastAttemptAt, failureCount: mark.consecutiveFailures,
                          hasMore: mark.pages.last?.next != nil)
    }
}

extension QueryState: CustomStringConvertible {
    /// `hasRows fetching stale` / `empty paused fresh error(httpStatus 500)`, for logs and tests.
    public var description: String {
        var parts = [data == .empty ? "empty" : "hasRows", "\(fetch)", isStale ? "stale" : "fresh"]
        if let error { parts.append("error(\(error.reason)\(error.status.map { " \($0)" } ?? ""))") }
        if hasMore { parts.append("hasMore") }
        return parts.joined(separator: " ")
    }
}

extension QueryState {
    /// The query state a ``Snapshot/Status`` implies, for snapshots built by hand: `loading`
    /// and `refreshing` are fetching, `stale` is stale, `failed` carries its error (recorded at
    /// the mark's last attempt). `staleAt` is unknown (nil) without a policy.
    public init(status: Snapshot.Status, rows: [Row], mark: SyncMark?) {
        let fetching = status == .loading || status == .refreshing
        var error: SyncMark.FailureInfo?
        if case .failed(let e, _) = status { error = e }
        self.init(data: rows.isEmpty ? .empty : .hasRows, dataUpdatedAt: mark?.validatedAt, fetch: fetching ? .fetching : .idle,
                  isStale: status == .stale || status == .empty, error: error, errorUpdatedAt: error == nil ? nil : mark?.lastAttemptAt,
                  failureCount: mark?.consecutiveFailures ?? 0, hasMore: mark?.pages.last?.next != nil)
    }
}
