import Foundation
import Freshet
import FreshetHTTP
import FreshetTesting
import Testing

extension MutationTests {
    /// Pending mutations are user data: they survive closing and reopening the store, and are
    /// sent once each, in order, when the network comes back.
    @Suite("Relaunch")
    struct Relaunch {
        @Test("three mutations proposed offline survive three reopens in LSN order, then are sent once each, in order, and confirmed")
        func threePendingSurviveReopens() async throws {
            try await withTemporaryDirectory { directory in
                // Launch 1: offline. Every request is refused.
                let offline = MutationWorld()
                offline.transport.on(where: { _ in true }, reply: .fail(.cannotConnect))
                var proposed: [PendingMutation] = []
                do {
                    let store = try Store(directory: directory, configuration: .test(), dependencies: offline.dependencies)
                    defer { store.close() }
                    store.register(todosResource)
                    for n in 1...3 {
                        proposed.append(try await store.mutate(try createTodo("tmp-\(n)", "Todo \(n)")))
                    }
                    #expect(proposed.map(\.id) == [mutationID(1), mutationID(2), mutationID(3)])
                    #expect(proposed.map(\.lsn) == [1, 2, 3])
                    await offline.transport.waitForRequests(1)
                    #expect(try store.pendingMutations().map(\.id) == proposed.map(\.id))
                }
                #expect(offline.requests(.post).allSatisfy { $0.headers["Idempotency-Key"] == mutationID(1).description },
                        "only the first of the queue may be tried while it is pending")

                // Launches 2 to 4: still offline. The queue is read from the log each time.
                for launch in 2...4 {
                    let world = MutationWorld()
                    world.transport.on(where: { _ in true }, reply: .fail(.cannotConnect))
                    let store = try Store(directory: directory, configuration: .test(), dependencies: world.dependencies)
                    defer { store.close() }
                    let queued = try store.pendingMutations()
                    #expect(queued.map(\.id) == proposed.map(\.id), "launch \(launch)")
                    #expect(queued.map(\.lsn) == proposed.map(\.lsn), "launch \(launch)")
                    #expect(queued.map(\.name) == ["createTodo", "createTodo", "createTodo"], "launch \(launch)")
                    #expect(try store.ids("todos") == ["tmp-1", "tmp-2", "tmp-3"], "launch \(launch)")
                    // Opening the store tries the first mutation of the queue (and fails).
                    await world.transport.waitForRequests(1)
                    #expect(world.transport.requests.first?.request.headers["Idempotency-Key"] == mutationID(1).description, "launch \(launch)")
                }

                // Launch 5: offline at first, then the network comes back.
                let world = MutationWorld()
                world.transport.on(where: { _ in true }, reply: .fail(.cannotConnect))
                let store = try Store(directory: directory, configuration: .test(), dependencies: world.dependencies)
                defer { store.close() }
                let queued = try store.pendingMutations()
                #expect(queued.map(\.id) == proposed.map(\.id))
                await world.transport.waitForRequests(1)
                await world.clock.waitForSleepers(1)    // the queue is in its backoff

                world.transport.removeRequests()
                world.transport.on(.post, "/todos", reply: .json(todoJSON(201, "Todo 1"), status: 201),
                                   .json(todoJSON(202, "Todo 2"), status: 201), .json(todoJSON(203, "Todo 3"), status: 201))
                await store.networkDidBecomeReachable()
                var outcomes: [MutationOutcome] = []
                for mutation in queued {
                    outcomes.append(try await store.handle(for: mutation).outcome())
                }

                #expect(outcomes.map(\.serverID) == ["201", "202", "203"])
                #expect(outcomes.map(\.id) == proposed.map(\.id))
                let requests = world.transport.requests.map(\.request)
                #expect(requests.map { "\($0.method.rawValue) \($0.url.path)" } == ["POST /todos", "POST /todos", "POST /todos"])
                #expect(requests.map { $0.headers["Idempotency-Key"] } == proposed.map(\.id.description))
                #expect(try store.pendingMutations().isEmpty)
                #expect(try store.ids("todos") == ["201", "202", "203"])
            }
        }
    }
}
