import Synchronization

/// The in-memory side of refreshing: what is in flight (for deduplication and the
/// `loading`/`refreshing` statuses), which resource feeds each collection (for policies,
/// invalidation and lifecycle refreshes), and rows the server said not to store.
/// Nothing here is durable: it is rebuilt as the app observes and refreshes after a relaunch.
final class RefreshState: Sendable {
    struct InFlight: Sendable {
        /// The collection's invalidation generation when the request started.
        var generation: Int
        var task: Task<RefreshSummary, any Error>
        var waiters: Int
    }

    private struct State: Sendable {
        var resources: [String: Resource] = [:]
        var generations: [String: Int] = [:]
        var inFlight: [String: InFlight] = [:]
        var fetching: [String: Int] = [:]
        /// `no-store` rows by collection, then page (0 for unpaged collections).
        var volatileRows: [String: [Int: [Row]]] = [:]
    }

    private let state = Mutex(State())

    func register(_ resource: Resource) {
        state.withLock { $0.resources[resource.collection] = resource }
    }

    func resource(for collection: String) -> Resource? {
        state.withLock { $0.resources[collection] }
    }

    /// Starts a new invalidation generation: refreshes asked for from now on do not join
    /// requests that started before.
    func bumpGeneration(_ collection: String) {
        state.withLock { $0.generations[collection, default: 0] += 1 }
    }

    /// Joins the in-flight refresh for `key` when it started in the current generation, or
    /// starts `make(previous)` — which should wait for `previous`, an older request for the
    /// same key, so that the newer response is always folded last.
    func join(key: String, collection: String, make: (Task<RefreshSummary, any Error>?) -> Task<RefreshSummary, any Error>) -> Task<RefreshSummary, any Error> {
        state.withLock { s in
            let generation = s.generations[collection] ?? 0
            if var current = s.inFlight[key], current.generation == generation {
                current.waiters += 1
                s.inFlight[key] = current
                return current.task
            }
            let task = make(s.inFlight[key]?.task)
            s.inFlight[key] = InFlight(generation: generation, task: task, waiters: 1)
            return task
        }
    }

    /// One waiter stopped waiting (it finished or was cancelled); returns whether nobody waits any more.
    func leave(key: String, task: Task<RefreshSummary, any Error>) -> Bool {
        state.withLock { s in
            guard var current = s.inFlight[key], current.task == task else { return true }
            current.waiters -= 1
            if current.waiters <= 0 {
                s.inFlight[key] = nil
                return true
            }
            s.inFlight[key] = current
            return false
        }
    }

    func beginFetch(_ collection: String) {
        state.withLock { $0.fetching[collection, default: 0] += 1 }
    }

    func endFetch(_ collection: String) {
        state.withLock { s in
            let n = (s.fetching[collection] ?? 1) - 1
            s.fetching[collection] = n > 0 ? n : nil
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
