import Foundation
import Freshet
import FreshetHTTP

extension Configuration {
    /// Settings for test stores: no fsync (throwaway data), a base URL for relative paths, and
    /// rows fresh for 300 s after the server confirmed them (whatever the response headers say).
    /// Garbage collection is off: these tests count the clock's sleepers and sleeps, and the
    /// collector's timer would be one more ("Garbage collection of unobserved keys" turns it on).
    static func test(baseURL: URL? = URL(string: "http://stub.invalid"), freshness: FreshnessPolicy = .maxAge(.seconds(300))) -> Configuration {
        var configuration = Configuration(durability: .none, baseURL: baseURL)
        configuration.defaultFreshness = freshness
        configuration.gcTime = .never
        return configuration
    }
}

extension Dependencies {
    /// The fixed test clock, backoff that never waits on the wall clock, no jitter, and
    /// `transport` (by default one that refuses every request).
    static func test(
        transport: any HTTPTransport = StubTransport.offline,
        now: @escaping @Sendable () -> Date = TestClock.fixed,
        sleeps clock: InstantSleepClock = InstantSleepClock()
    ) -> Dependencies {
        Dependencies(now: now, clock: clock, random: .zero, transport: transport)
    }
}

/// Runs `body` with a unique directory path under the temporary directory (not created;
/// a `Store` creates it) and removes the directory afterwards, also when `body` throws.
func withTemporaryDirectory<R>(_ body: (URL) async throws -> R) async throws -> R {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("freshet-tests-\(UUID().uuidString)", isDirectory: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await body(directory)
}

/// A synchronous ``withTemporaryStore(configuration:dependencies:_:)`` for tests that use only
/// the store's handles and transactions: a `.test()` store in a fresh temporary directory,
/// closed and removed after `body`, also when it throws.
func withScratchStore<R>(_ body: (Store) throws -> R) throws -> R {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("freshet-tests-\(UUID().uuidString)", isDirectory: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
    defer { store.close() }
    return try body(store)
}

/// Opens a store in a fresh temporary directory, runs `body`, then closes the store and
/// removes the directory, also when `body` throws.
func withTemporaryStore<R>(
    configuration: Configuration = .test(),
    dependencies: Dependencies = .test(),
    _ body: (Store) async throws -> R
) async throws -> R {
    try await withTemporaryDirectory { directory in
        let store = try Store(directory: directory, configuration: configuration, dependencies: dependencies)
        defer { store.close() }
        return try await body(store)
    }
}

extension Store {
    /// Every record of the log, in LSN order; an unreadable record fails the read.
    func allRecords(collection: String? = nil) throws -> [LogRecord] {
        var records: [LogRecord] = []
        try readLog(collection: collection) { entry in
            switch entry {
            case .record(let record): records.append(record)
            case .unreadable(_, let error): throw error
            }
            return true
        }
        return records
    }

    /// The row IDs of `collection`, in order.
    func ids(_ collection: String) throws -> [String] {
        try snapshot(collection).rows.map(\.id)
    }
}
