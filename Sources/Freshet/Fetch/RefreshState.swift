import Synchronization

/// The in-memory side of refreshing: what is in flight (for deduplication and the
/// `loading`/`refreshing` statuses), which resource feeds each collection (for policies,
/// invalidation and lifecycle refreshes), and rows the server said not to store.
/// Nothing here is durable: it is rebuilt as the app observes and refreshes after a relaunch.
final class RefreshState: Sendable {
    /// What a caller of a shared request gets: the request's outcome, or nil when it neither
    /// joined nor started one because a request of the collection ended since the caller's
    /// recheck point (see ``share(key:collection:waiter:unlessEndedSince:start:_:)``).
    typealias Delivery = Result<RefreshSummary, FetchError>?

    /// One request shared by every caller that joined it.
    private struct Shared: Sendable {
        var key: String
        var collection: String
        /// Runs the request and ends with ``complete(_:with:)``; waits for the previous
        /// request of the same key first.
        var worker: Task<Void, Never>
        /// The callers still waiting, by waiter ID. A cancelled caller leaves; the last one
        /// to leave cancels the worker.
        var waiters: [UInt64: CheckedContinuation<Delivery, Never>]
        /// The URL, for the error a cancelled caller gets.
        var url: String
        /// Waiters that did not ask for this request (``Store/refreshIfNeeded(_:)`` callers that
        /// found it in flight under another key): they get nil, to read again what it left.
        var rechecking: Set<UInt64> = []
    }

    private struct State: Sendable {
        var resources: [String: Resource] = [:]
        var lastID: UInt64 = 0
        /// Requests from their start until their worker completes, by request ID.
        var shared: [UInt64: Shared] = [:]
        /// The request a new caller of a key joins: one still truly in flight, started in the
        /// collection's current invalidation generation, with callers waiting for it. A
        /// request stops being joinable when its fetch ends (in the commit that ends it,
        /// before observers hear of it), when its collection is invalidated, and when its
        /// last caller leaves.
        var joinable: [String: UInt64] = [:]
        /// How many times a request of each collection stopped being joinable: the recheck
        /// point of ``Store/refreshIfNeeded(_:)``.
        var endings: [String: Int] = [:]
        var fetching: [String: Int] = [:]
        /// `no-store` rows by collection, then page (0 for unpaged collections).
        var volatileRows: [String: [Int: [Row]]] = [:]

        mutating func makeID() -> UInt64 {
            lastID += 1
            return lastID
        }

        /// Makes request `id` unjoinable (when it still is).
        mutating func retire(_ id: UInt64) {
            guard let request = shared[id], joinable[request.key] == id else { return }
            joinable[request.key] = nil
            endings[request.collection, default: 0] += 1
        }
    }

    private let state = Mutex(State())

    func register(_ resource: Resource) {
        state.withLock { $0.resources[resource.collection] = resource }
    }

    /// Every resource registered in this process, one per collection.
    func registeredResources() -> [Resource] {
        state.withLock { Array($0.resources.values) }
    }

    func resource(for collection: String) -> Resource? {
        state.withLock { $0.resources[collection] }
    }

    /// A new ID for a caller of ``share(key:collection:waiter:unlessEndedSince:start:_:)``,
    /// made before it waits so that its cancellation handler can name it.
    func makeWaiterID() -> UInt64 {
        state.withLock { $0.makeID() }
    }

    /// Starts a new invalidation generation of `collection`: requests in flight stop being
    /// joinable, so refreshes asked for from now on start a request of their own (which
    /// waits for the older one, see ``share(key:collection:waiter:unlessEndedSince:start:_:)``).
    func bumpGeneration(_ collection: String) {
        state.withLock { s in
            for id in s.joinable.values where s.shared[id]?.collection == collection { s.retire(id) }
        }
    }

    /// How many times a request of `collection` has stopped being joinable: read it before
    /// reading the collection's state, pass it as `unlessEndedSince`, and a request that ends
    /// in between is noticed instead of being started again.
    func endings(_ collection: String) -> Int {
        state.withLock { $0.endings[collection] ?? 0 }
    }

    /// Makes `waiter` a caller of the joinable request for `key`, or of a new one made by
    /// `start(id, previous)`, and arranges for `continuation` to get its outcome.
    ///
    /// `start` must return a task that first waits for `previous` (the newest older request of
    /// the same collection, still running), so the newer response is always folded last, then runs
    /// the request and calls ``complete(_:with:)`` with `id`.
    ///
    /// With `unlessEndedSince`, nothing is started (the continuation gets nil) when a request
    /// of `collection` stopped being joinable since that ``endings(_:)`` value, nor while a
    /// joinable request of `collection` under another key is in flight: the continuation gets
    /// nil when that request completes. A waiter
    /// whose task is already cancelled gets `cancelled` at once and starts nothing.
    func share(key: String, collection: String, url: String, waiter: UInt64, unlessEndedSince: Int?,
               start: (_ id: UInt64, _ previous: Task<Void, Never>?) -> Task<Void, Never>,
               _ continuation: CheckedContinuation<Delivery, Never>) {
        let immediate = state.withLock { s -> Delivery? in
            // Cancellation sets the flag before its handler runs: either the handler
            // finds this waiter registered, or the flag is already set here.
            if Task.isCancelled { return .some(.failure(Self.cancelled(url))) }
            if let id = s.joinable[key], s.shared[id] != nil {
                s.shared[id]?.waiters[waiter] = continuation
                return nil
            }
            if let since = unlessEndedSince, (s.endings[collection] ?? 0) != since { return .some(nil) }
            // A recheck caller (refreshIfNeeded) that finds a request of the collection in
            // flight under another key (a loadMore, a reset, a reload) waits for it and reads
            // again: it may leave the collection fresh (no second request for page 1).
            if unlessEndedSince != nil,
               let other = s.joinable.values.filter({ s.shared[$0]?.collection == collection }).max() {
                s.shared[other]?.waiters[waiter] = continuation
                s.shared[other]?.rechecking.insert(waiter)
                return nil
            }
            // Requests of one collection fold one after the other, whatever their key (a
            // refresh, a reload, a loadMore): each decides what to fetch from what the one
            // before it left.
            let previous = s.shared.filter { $0.value.collection == collection }.max { $0.key < $1.key }?.value.worker
            // A caller asked for after this request must see what it folds: the collection's
            // older requests under other keys stop being joinable (a loadMore asked during a
            // `.firstPage` reset must not join the loadMore in flight before it, whose page
            // the reset drops).
            for other in s.joinable.values where other != s.joinable[key] && s.shared[other]?.collection == collection { s.retire(other) }
            let id = s.makeID()
            let worker = start(id, previous)
            s.shared[id] = Shared(key: key, collection: collection, worker: worker, waiters: [waiter: continuation], url: url)
            s.joinable[key] = id
            return nil
        }
        if let immediate { continuation.resume(returning: immediate) }
    }

    /// `waiter` stops waiting (its task was cancelled): it gets `cancelled` at once; the
    /// request goes on for the other callers, and is cancelled when none is left.
    func leave(waiter: UInt64) {
        let taken = state.withLock { s -> (CheckedContinuation<Delivery, Never>, String)? in
            guard let id = s.shared.first(where: { $0.value.waiters[waiter] != nil })?.key,
                  let continuation = s.shared[id]?.waiters.removeValue(forKey: waiter),
                  let request = s.shared[id] else { return nil }
            if request.waiters.isEmpty {
                // Nobody waits any more: the request is cancelled and nobody may join it.
                s.retire(id)
                request.worker.cancel()
            }
            return (continuation, request.url)
        }
        if let taken { taken.0.resume(returning: .failure(Self.cancelled(taken.1))) }
    }

    /// Request `id` finished: every caller still waiting gets `result`.
    func complete(_ id: UInt64, with result: Result<RefreshSummary, FetchError>) {
        let waiters = state.withLock { s -> [(CheckedContinuation<Delivery, Never>, rechecks: Bool)] in
            s.retire(id)
            guard let request = s.shared.removeValue(forKey: id) else { return [] }
            return request.waiters.map { ($0.value, request.rechecking.contains($0.key)) }
        }
        for (waiter, rechecks) in waiters { waiter.resume(returning: rechecks ? nil : result) }
    }

    /// How many callers wait for requests of `collection` right now (for tests and diagnostics).
    func waiterCount(_ collection: String) -> Int {
        state.withLock { s in s.shared.values.filter { $0.collection == collection }.reduce(0) { $0 + $1.waiters.count } }
    }

    private static func cancelled(_ url: String) -> FetchError {
        FetchError(.cancelled, "GET \(url) was cancelled", url: url)
    }

    func beginFetch(_ collection: String) {
        state.withLock { $0.fetching[collection, default: 0] += 1 }
    }

    /// Ends a fetch of `collection` for request `id`: the collection is no longer shown as
    /// in flight, and the request can no longer be joined (both before observers hear of it).
    func endFetch(_ collection: String, request id: UInt64) {
        state.withLock { s in
            let n = (s.fetching[collection] ?? 1) - 1
            s.fetching[collection] = n > 0 ? n : nil
            s.retire(id)
        }
    }

    func isFetching(_ collection: String) -> Bool {
        state.withLock { ($0.fetching[collection] ?? 0) > 0 }
    }

    func setVolatile(_ rows: [Row], collection: String, page: Int, isLast: Bool) {
        state.withLock { s in
            var pages = s.volatileRows[collection] ?? [:]
            pages[page] = rows
            if isLast { pages = pages.filter { $0.key <= page } }
            s.volatileRows[collection] = pages
        }
    }

    func upsertVolatile(_ rows: [Row], collection: String) {
        state.withLock { s in
            var current = s.volatileRows[collection]?[0] ?? []
            for row in rows {
                if let i = current.firstIndex(where: { $0.id == row.id }) { current[i] = row } else { current.append(row) }
            }
            s.volatileRows[collection] = [0: current]
        }
    }

    func clearVolatile(_ collection: String) {
        _ = state.withLock { $0.volatileRows.removeValue(forKey: collection) }
    }

    /// The `no-store` rows of `collection` in page order, or nil when it has none.
    func volatileRows(_ collection: String) -> [Row]? {
        state.withLock { s in
            s.volatileRows[collection].map { pages in pages.sorted { $0.key < $1.key }.flatMap(\.value) }
        }
    }
}
