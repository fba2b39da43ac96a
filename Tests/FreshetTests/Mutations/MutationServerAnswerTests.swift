import Foundation
import Freshet
import FreshetHTTP
import FreshetTesting
import Testing

extension MutationTests {
    /// What the server's answer does to a pending edit: a 4xx rolls it back, a 5xx keeps it
    /// for a retry after backoff with the same idempotency key.
    @Suite("Server answers")
    struct ServerAnswers {
        static let conflictBody = #"{"error":"version conflict","expected":7}"#

        @Test("a 409 rolls the edit back to the server's title; outcome throws rejected with status 409 and the body")
        func conflictRollsBack() async throws {
            let world = MutationWorld()
            let patch = Gate()
            world.transport.on("/todos", reply: .json(todosJSON([(1, "Old title"), (2, "two")])))
            world.transport.on(.patch, "/todos/1", reply: .held(patch, then: .json(Self.conflictBody, status: 409)))
            try await world.withStore { store in
                try await store.refresh(todosResource)
                #expect(try title("1", in: store) == "Old title")

                let pending = try await store.mutate(editTodo("1", title: "New title"))
                await patch.waitUntilReached()
                // The overlay shows the edit in place while the request is out.
                #expect(try store.ids("todos") == ["1", "2"])
                #expect(try title("1", in: store) == "New title")
                #expect(try store.snapshot("todos").pendingMutations == [pending.id])

                patch.release()
                let error = try #require(await settle(pending).error)
                #expect(error.code == .rejected)
                #expect(error.status == 409)
                #expect(error.body == Self.conflictBody)
                #expect(error.mutationID == pending.id)

                let after = try store.snapshot("todos")
                #expect(after.rows == [serverTodo(1, "Old title"), serverTodo(2, "two")])
                #expect(after.pendingMutations.isEmpty)
                #expect(try store.pendingMutations().isEmpty)

                let events = try store.mutationEvents()
                #expect(events.count == 2)
                guard case .mutationRolledBack(let rolledBack) = try #require(events.last).event else {
                    Issue.record("the last mutation event is not mutationRolledBack: \(events)")
                    return
                }
                #expect(rolledBack.id == pending.id)
                #expect(rolledBack.status == 409)
                #expect(rolledBack.body == Data(Self.conflictBody.utf8))
                #expect(rolledBack.affected == ["todos"])
                // One request: a 4xx is not retried.
                #expect(world.requests(.patch).count == 1)
            }
        }

        /// A rejected edit names a row the server has: it must not mark that row's ID as a
        /// provisional ID whose create was rolled back.
        @Test("after a 409 on an edit of todo 1, the next edit of todo 1 is sent and confirmed")
        func editAfterRejectedEditIsSent() async throws {
            let world = MutationWorld()
            world.transport.on("/todos", reply: .json(todosJSON([(1, "Old title"), (2, "two")])))
            world.transport.on(.patch, "/todos/1", reply: .json(Self.conflictBody, status: 409), .json(todoJSON(1, "Newer title")))
            try await world.withStore { store in
                try await store.refresh(todosResource)
                let rejected = try await store.mutate(editTodo("1", title: "New title"))
                #expect(await settle(rejected).error?.code == .rejected)

                let retried = try await store.mutate(editTodo("1", title: "Newer title"))
                let result = await settle(retried)
                #expect(result.error == nil, "the second edit ended with \(result.error.map { "\($0.code): \($0.message)" } ?? "")")
                #expect(world.requests(.patch).map(\.url.path) == ["/todos/1", "/todos/1"])
                #expect(try store.snapshot("todos").rows == [serverTodo(1, "Newer title"), serverTodo(2, "two")])
            }
        }

        @Test("a 503 keeps the edit pending; after the backoff it is sent again with the same Idempotency-Key and confirmed")
        func unavailableThenConfirmed() async throws {
            let world = MutationWorld()
            world.transport.on("/todos", reply: .json(todosJSON([(1, "Old title"), (2, "two")])))
            world.transport.on(.patch, "/todos/1", reply: .status(503), .json(todoJSON(1, "New title")))
            try await world.withStore { store in
                try await store.refresh(todosResource)
                let pending = try await store.mutate(editTodo("1", title: "New title"))

                await world.transport.waitForRequests(2)   // the GET, then the PATCH answered 503
                await world.clock.waitForSleepers(1)       // the queue's backoff
                let queued = try store.pendingMutations()
                #expect(queued.map(\.id) == [pending.id])
                #expect(queued.first?.attempts == 1)
                #expect(queued.first?.lastError == "PATCH http://stub.invalid/todos/1 answered 503")
                #expect(try title("1", in: store) == "New title")

                // The first retry waits RetryPolicy's delay for attempt 1 with the first seeded draw.
                let backoff = Configuration.RetryPolicy().delay(afterAttempt: 1, random: SeededRandom.source(seed: 0).unitInterval())
                let deadline = try #require(world.clock.nextDeadline)
                #expect(deadline == FreshetTesting.TestClock.Instant.zero.advanced(by: backoff))
                #expect(world.requests(.patch).count == 1)

                await world.clock.advance(by: backoff)
                let outcome = try await pending.outcome()
                #expect(outcome.status == 200)
                #expect(outcome.rows == [serverTodo(1, "New title")])
                #expect(outcome.serverID == nil)

                let patches = world.transport.requests.filter { $0.request.method == .patch }
                #expect(patches.count == 2)
                #expect(patches.map { $0.request.headers["Idempotency-Key"] } == [pending.id.description, pending.id.description])
                #expect(pending.id.description == "00000000-0000-0000-0000-000000000001")
                #expect(patches.map(\.instant) == [.zero, deadline])
                #expect(try store.pendingMutations().isEmpty)
                #expect(try store.snapshot("todos").rows == [serverTodo(1, "New title"), serverTodo(2, "two")])
            }
        }
    }
}
