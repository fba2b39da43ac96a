import Foundation
import Freshet
import FreshetHTTP
import FreshetTesting
import Testing

extension MutationTests {
    /// An edit of a row that only exists provisionally (created offline): it waits for the
    /// create, is sent with the server's ID, and goes down with the create if that is rejected.
    @Suite("Dependent mutations")
    struct Dependent {
        /// A store with todos 1 and 2, then — offline — `create` (tmp-1) and `edit` (of
        /// tmp-1) proposed, with the queue asleep in its backoff and the requests so far forgotten.
        static func proposeOffline(_ world: MutationWorld, _ store: Store) async throws -> (create: PendingMutation, edit: PendingMutation) {
            try await store.refresh(todosResource)
            let create = try await store.mutate(try createTodo("tmp-1", "Buy milk"))
            await world.transport.waitForRequests(2)      // GET /todos, POST /todos (refused)
            await world.clock.waitForSleepers(1)
            let edit = try await store.mutate(editTodo("tmp-1", title: "Buy oat milk"))
            await world.transport.waitForRequests(3)      // the new mutation woke the queue: POST again (refused)
            await world.clock.waitForSleepers(1)

            let offlineWrites = world.transport.requests.dropFirst().map(\.description)
            #expect(offlineWrites == ["POST /todos", "POST /todos"], "nothing but the create may be tried while it is pending")
            #expect(try store.pendingMutations().map(\.id) == [create.id, edit.id])
            #expect(try store.ids("todos") == ["1", "2", "tmp-1"])
            #expect(try title("tmp-1", in: store) == "Buy oat milk")
            world.transport.removeRequests()
            return (create, edit)
        }

        @Test("offline create then edit of tmp-1: online, the POST goes first and the PATCH follows its confirmation, to /todos/201 with 201 in the body")
        func editWaitsForCreate() async throws {
            let world = MutationWorld()
            world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")])))
            world.transport.on(where: { $0.method != .get }, reply: .fail(.cannotConnect))
            try await world.withStore { store in
                let (create, edit) = try await Self.proposeOffline(world, store)

                // Online. The POST is held so the test can look at the queue in between.
                let post = Gate()
                world.transport.on(.post, "/todos", reply: .held(post, then: .json(todoJSON(201, "Buy milk"), status: 201)))
                world.transport.on(.patch, "/todos/201", reply: .json(todoJSON(201, "Buy oat milk")))
                await store.networkDidBecomeReachable()
                await post.waitUntilReached()
                #expect(world.transport.requests.map(\.description) == ["POST /todos"])
                #expect(try store.pendingMutations().map(\.id) == [create.id, edit.id])
                post.release()

                let created = try await create.outcome()
                #expect(created.serverID == "201")
                let edited = try await edit.outcome()
                #expect(edited.status == 200)
                #expect(edited.rows == [serverTodo(201, "Buy oat milk")])

                let requests = world.transport.requests.map(\.request)
                #expect(requests.map { "\($0.method.rawValue) \($0.url.path)" } == ["POST /todos", "PATCH /todos/201"])
                #expect(requests.map { $0.headers["Idempotency-Key"] } == [create.id.description, edit.id.description])
                let patchBody = try #require(requests.last?.body)
                #expect(String(decoding: patchBody, as: UTF8.self) == #"{"id":201,"title":"Buy oat milk"}"#)

                let final = try store.snapshot("todos")
                #expect(final.rows == [serverTodo(1, "one"), serverTodo(2, "two"), serverTodo(201, "Buy oat milk")])
                #expect(final.pendingMutations.isEmpty)
                #expect(try store.pendingMutations().isEmpty)
            }
        }

        @Test("a rejected create (422) rolls back the edit that depends on it with dependencyRolledBack; the PATCH is never sent")
        func rejectedCreateRollsBackEdit() async throws {
            let world = MutationWorld()
            let rejection = #"{"error":"title is required"}"#
            world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")])))
            world.transport.on(where: { $0.method != .get }, reply: .fail(.cannotConnect))
            try await world.withStore { store in
                let (create, edit) = try await Self.proposeOffline(world, store)

                world.transport.on(.post, "/todos", reply: .json(rejection, status: 422))
                await store.networkDidBecomeReachable()

                let createError = try #require(await settle(create).error)
                #expect(createError.code == .rejected)
                #expect(createError.status == 422)
                #expect(createError.body == rejection)
                let editError = try #require(await settle(edit).error)
                #expect(editError.code == .dependencyRolledBack)
                #expect(editError.mutationID == edit.id)

                #expect(world.transport.requests.map(\.description) == ["POST /todos"])
                #expect(try store.ids("todos") == ["1", "2"])
                #expect(try store.pendingMutations().isEmpty)
                let rollbacks = try store.mutationEvents().compactMap { entry -> Event.MutationRolledBack? in
                    if case .mutationRolledBack(let r) = entry.event { return r }
                    return nil
                }
                #expect(rollbacks.map(\.id) == [create.id, edit.id])
                #expect(rollbacks.map(\.status) == [422, nil])
            }
        }

        /// Provisional IDs from a counter (`tmp-1`, …, `tmp-10`) contain each other as text.
        /// A dependency is a provisional ID the request names, not one that is a substring of it.
        @Test("an edit of tmp-10 is sent to /todos/201 although the create of tmp-1 was rejected")
        func rejectedCreateDoesNotPoisonLongerProvisionalID() async throws {
            let world = MutationWorld()
            world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")])))
            world.transport.on(.post, "/todos", reply: .json(#"{"error":"title is required"}"#, status: 422),
                               .json(todoJSON(201, "Buy bread"), status: 201))
            world.transport.on(.patch, "/todos/201", reply: .json(todoJSON(201, "Buy rye bread")))
            try await world.withStore { store in
                try await store.refresh(todosResource)
                let rejected = try await store.mutate(try createTodo("tmp-1", ""))
                #expect(await settle(rejected).error?.code == .rejected)
                let created = try await store.mutate(try createTodo("tmp-10", "Buy bread"))
                #expect(try await created.outcome().serverID == "201")

                let edit = try await store.mutate(editTodo("tmp-10", title: "Buy rye bread"))
                let result = await settle(edit)
                #expect(result.error == nil, "the edit of tmp-10 ended with \(result.error.map { "\($0.code): \($0.message)" } ?? "")")
                #expect(world.transport.requests.map(\.description) == ["GET /todos", "POST /todos", "POST /todos", "PATCH /todos/201"])
                #expect(try store.snapshot("todos").rows == [serverTodo(1, "one"), serverTodo(2, "two"), serverTodo(201, "Buy rye bread")])
            }
        }
    }
}
