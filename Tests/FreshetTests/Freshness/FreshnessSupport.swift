import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Synchronization
import Testing

// Helpers for the freshness, revalidation, retry and lifecycle tests (issue 3). They drive a
// real store on a `ScriptedTransport` and FreshetTesting's `TestClock`: no test here reads
// the wall clock or sleeps on it.
//
// This module also declares a `TestClock` of its own (Support/TestClock.swift), which wins
// name lookup inside the module; `KitClock` names the test kit's clock.

/// FreshetTesting's `TestClock`: starts at 2026-01-01T00:00:00Z and moves only when advanced.
typealias KitClock = FreshetTesting.TestClock

/// The base URL of the scripted server.
let scriptedBaseURL = URL(string: "https://api.test")!

extension Configuration {
    /// A test store on the scripted server: no fsync, `policy` as the default freshness, and
    /// retries without jitter (3 attempts, 1 s, 2 s …) so the backoff instants are exact.
    /// Garbage collection is off (see ``test(baseURL:freshness:)``).
    static func scripted(freshness policy: FreshnessPolicy = .http, retry: RetryPolicy = RetryPolicy(jitter: 0)) -> Configuration {
        var configuration = Configuration(durability: .none, baseURL: scriptedBaseURL)
        configuration.gcTime = .never
        configuration.defaultFreshness = policy
        configuration.retry = retry
        return configuration
    }
}

/// A store in a temporary directory, fed by a scripted network, on a test clock — and able to
/// close and reopen the same directory with the same clock, as an app relaunch would.
final class ScriptedStore {
    let clock: KitClock
    let transport: ScriptedTransport
    let directory: URL
    let configuration: Configuration
    let seed: UInt64
    private(set) var store: Store

    init(directory: URL, configuration: Configuration, seed: UInt64, clock: KitClock = KitClock()) throws {
        self.clock = clock
        self.transport = ScriptedTransport(clock: clock)
        self.directory = directory
        self.configuration = configuration
        self.seed = seed
        self.store = try Store(directory: directory, configuration: configuration,
                               dependencies: Dependencies.test(clock: clock, transport: transport, seed: seed))
    }

    /// Closes the store and opens the same directory again with the same clock and network.
    @discardableResult
    func reopen() throws -> Store {
        store.close()
        store = try Store(directory: directory, configuration: configuration,
                          dependencies: Dependencies.test(clock: clock, transport: transport, seed: seed))
        return store
    }

    /// The date of the test clock `seconds` after its start.
    func date(_ seconds: Double) -> Date {
        clock.start.addingTimeInterval(seconds)
    }

    /// The instants the scripted server received its requests at, as offsets in seconds.
    var requestOffsets: [Double] {
        transport.requests.map { ($0.instant?.offset).map(secondsOf) ?? .nan }
    }

    /// The recorded requests' values for header `name`, in order (nil where absent).
    func header(_ name: String) -> [String?] {
        transport.requests.map { $0.request.headers[name] }
    }

    /// The `freshet dump DIR --json` lines of this store; the store is closed first (a
    /// directory is opened once per process) and stays closed.
    func dumpJSON() -> ToolRun {
        store.close()
        return runTool(["dump", directory.path, "--json"])
    }
}

/// Runs `body` with a fresh ``ScriptedStore``, and closes it and removes its directory
/// afterwards (also on a throw).
func withScriptedStore<R>(
    _ configuration: Configuration = .scripted(),
    seed: UInt64 = 0,
    _ body: (ScriptedStore) async throws -> R
) async throws -> R {
    try await withTemporaryDirectory { directory in
        let harness = try ScriptedStore(directory: directory, configuration: configuration, seed: seed)
        defer { harness.store.close() }
        return try await body(harness)
    }
}

/// `duration` in seconds.
func secondsOf(_ duration: Duration) -> Double {
    let c = duration.components
    return Double(c.seconds) + Double(c.attoseconds) / 1e18
}

/// The rows collection `items` is built of: `[{"id":"a","v":1}, …]`.
enum ItemsFixture {
    /// The JSON body of rows `ids`, each with version `v`.
    static func body(_ ids: [String], v: Int = 1) -> String {
        "[" + ids.map { #"{"id":"\#($0)","v":\#(v)}"# }.joined(separator: ",") + "]"
    }

    /// The rows the store keeps for `body(ids, v:)` (the server's objects, keys sorted).
    static func rows(_ ids: [String], v: Int = 1) -> [Row] {
        ids.map { Row(id: $0, json: Data(#"{"id":"\#($0)","v":\#(v)}"#.utf8)) }
    }

    /// A 200 with the rows and `headers`.
    static func reply(_ ids: [String], v: Int = 1, headers: HTTPHeaders = [:]) -> ScriptedTransport.Reply {
        .json(body(ids, v: v), headers: headers)
    }

    /// The resource for `GET /items`: a root array, IDs from `id`, one page.
    static func resource(_ policy: FreshnessPolicy? = nil, collection: String = "items", path: String = "/items",
                         query: [String: String] = [:]) -> Resource {
        Resource(collection: collection, path: path, query: query, rows: .rootArray, id: .field("id"), freshness: policy)
    }
}

/// The IMF-fixdate of `date`, as a server sends it in `Date`, `Expires` and `Last-Modified`.
func imfDate(_ date: Date) -> String {
    HTTPDate.format(date)
}

/// Runs `body`, expecting it to throw a ``FetchError``; returns it (nil, with an issue
/// recorded, when `body` returns).
func expectFetchError<T>(_ body: () async throws -> T, sourceLocation: SourceLocation = #_sourceLocation) async -> FetchError? {
    do {
        let value = try await body()
        Issue.record("expected a FetchError, got \(value)", sourceLocation: sourceLocation)
        return nil
    } catch let error as FetchError {
        return error
    } catch {
        Issue.record("expected a FetchError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// The error a task ended with, if it is a ``FetchError``.
func expectFetchError<T>(of task: Task<T, any Error>, sourceLocation: SourceLocation = #_sourceLocation) async -> FetchError? {
    await expectFetchError({ try await task.value }, sourceLocation: sourceLocation)
}

extension LogRecord {
    /// The `fetchFailed` payload, if this is one.
    var fetchFailed: Event.FetchFailed? {
        if case .fetchFailed(let f) = event { return f }
        return nil
    }

    /// The `fetched` payload, if this is one.
    var fetched: Event.Fetched? {
        if case .fetched(let f) = event { return f }
        return nil
    }

    /// The `notModified` payload, if this is one.
    var notModified: Event.NotModified? {
        if case .notModified(let n) = event { return n }
        return nil
    }
}

/// A counter tasks can bump.
final class CallCounter: Sendable {
    private let value = Mutex(0)
    @discardableResult
    func increment() -> Int { value.withLock { $0 += 1; return $0 } }
    var count: Int { value.withLock { $0 } }
}

/// Collects the snapshots of an observation until one satisfies `until`, which is included.
func collectSnapshots(_ iterator: inout CollectionObservation.AsyncIterator, until done: (Snapshot) -> Bool,
             sourceLocation: SourceLocation = #_sourceLocation) async throws -> [Snapshot] {
    var seen: [Snapshot] = []
    while let snapshot = try await iterator.next() {
        seen.append(snapshot)
        if done(snapshot) { return seen }
    }
    Issue.record("the observation ended after \(seen.map(\.status))", sourceLocation: sourceLocation)
    return seen
}
