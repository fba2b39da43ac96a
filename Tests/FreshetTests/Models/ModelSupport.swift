import Foundation
@testable import Freshet
@testable import FreshetModels
import FreshetTesting
import Observation
import Synchronization
import Testing
import TestSupport

/// The model suites (Tests/FreshetTests/Models), nested here so `swift test --filter ModelTests`
/// runs exactly them. They drive real stores on a `ScriptedTransport` and FreshetTesting's
/// `TestClock`, and wait for the models with `withObservationTracking`: woken by the changes
/// themselves, never by polling or the wall clock.
@Suite("FreshetModels", .scaledTimeLimit(minutes: 3))
enum ModelTests {}

/// A row of the `items` fixture (`{"id":"a","v":1}`).
struct Item: Decodable, Sendable, Hashable {
    var id: String
    var v: Int
}

/// Counts calls from any task.
final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func add() { value.add(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}

extension QueryDefinition where Value == Item {
    /// `GET /items` as `Item`s, fresh for 300 s; every decode is counted in `decodes`.
    static func items(counting decodes: Counter = Counter(), upgrade: (@Sendable (Row) throws -> Item)? = nil) -> QueryDefinition<Item> {
        QueryDefinition(ItemsFixture.resource(.maxAge(.seconds(300))), as: Item.self, decode: { row in
            decodes.add()
            return try RowDecoder().decode(Item.self, from: row.json)
        }, upgrade: upgrade)
    }
}

/// Suspends until `condition` holds, re-checking it each time something it reads changes
/// (`withObservationTracking`); returns at once when it holds already. A cancelled task (the
/// suite's time limit) stops waiting and records an issue, so a wait that never ends fails
/// instead of hanging.
@MainActor
func waitUntil(_ condition: @MainActor () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async {
    while !condition() {
        if Task.isCancelled {
            Issue.record("cancelled while waiting for a model condition", sourceLocation: sourceLocation)
            return
        }
        let wake = Wake()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                wake.set(continuation)
                withObservationTracking { _ = condition() } onChange: { wake.resume() }
                if Task.isCancelled { wake.resume() }
            }
        } onCancel: {
            wake.resume()
        }
    }
}

/// A continuation resumed once, by whichever comes first: a change or a cancellation.
private final class Wake: Sendable {
    private let continuation = Mutex<CheckedContinuation<Void, Never>?>(nil)
    func set(_ c: CheckedContinuation<Void, Never>) { continuation.withLock { $0 = c } }
    func resume() { continuation.withLock { c in defer { c = nil }; return c }?.resume() }
}

/// Records whether anything `read` touches changed since it was made (one-shot, as
/// `withObservationTracking` is: it says whether a change happened, not how many).
final class ChangeFlag: Sendable {
    private let fired = Atomic<Bool>(false)

    @MainActor
    init(_ read: @MainActor () -> Void) {
        withObservationTracking { read() } onChange: { [self] in self.fired.store(true, ordering: .relaxed) }
    }

    var hasFired: Bool { fired.load(ordering: .relaxed) }
}

/// Runs `body` on the main actor with a fresh ``ScriptedStore`` (rows fresh for 300 s), then
/// closes it and removes its directory (also on a throw). A main-actor twin of
/// `withScriptedStore`, so test bodies hold models without sending closures across isolation.
@MainActor
func withModelStore(_ body: (ScriptedStore) async throws -> Void) async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("freshet-tests-\(UUID().uuidString)", isDirectory: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let harness = try ScriptedStore(directory: directory, configuration: .scripted(freshness: .maxAge(.seconds(300))), seed: 0)
    defer { harness.store.close() }
    try await body(harness)
}
