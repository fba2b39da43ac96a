import Foundation
import Freshet
import FreshetHTTP
import FreshetTesting
import Synchronization
import Testing

extension MutationTests {
    /// Answers that say the server already has the state a mutation asks for: a DELETE
    /// answered 404 / 410 is confirmed (RFC 9110 §9.2.2, §15.5.5, §15.5.11), and a request
    /// replayed after a lost response gets the first answer back through its Idempotency-Key.
    @Suite("Idempotent answers")
    struct IdempotentAnswers {
        @Test("an optimistic DELETE /todos/2 answered 404 or 410 is confirmed as alreadyGone with that status; row 2 stays deleted", arguments: [404, 410])
        func deleteOfAGoneRowIsConfirmed(status: Int) async throws {
            let world = MutationWorld()
            world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")])))
            world.transport.on(.delete, "/todos/2", reply: .json("{}", status: status))
            try await world.withStore { store in
                try await store.refresh(todosResource)
                let pending = try await store.mutate(Mutation(name: "deleteTodo", ops: [.delete(id: "2", in: "todos")],
                                                              request: .init(method: .delete, path: "/todos/2")))
                let outcome = try await pending.outcome()
                #expect(outcome.status == status)
                #expect(outcome.kind == .alreadyGone)
                #expect(outcome.rows.isEmpty)
                #expect(try store.snapshot("todos").rows == [serverTodo(1, "one")])
                #expect(try store.pendingMutations().isEmpty)
                let events = try store.mutationEvents().map(\.event)
                #expect(events.map(\.kind.name) == ["mutationProposed", "mutationConfirmed"])
                if case .mutationConfirmed(let confirmed) = try #require(events.last) {
                    #expect(confirmed.status == status)
                    #expect(confirmed.affected == ["todos"])
                }
                #expect(try store.allRecords().last?.summary == "\(pending.id) confirmed, \(status) (already gone)")
                #expect(world.requests(.delete).count == 1)
            }
        }

        @Test("a 201 whose row ID no row can have (300 bytes) confirms as malformedConfirmation and invalidates todos; the queue goes on")
        func unusableServerIDDoesNotHoldTheQueue() async throws {
            let world = MutationWorld()
            let longID = String(repeating: "x", count: 300)
            world.transport.on(.post, "/todos", reply: .json(#"{"id":"\#(longID)","title":"Buy milk"}"#, status: 201), .json(todoJSON(202, "Second"), status: 201))
            try await world.withStore { store in
                store.register(todosResource)
                let first = try await store.mutate(try createTodo("tmp-1", "Buy milk"))
                let second = try await store.mutate(try createTodo("tmp-2", "Second"))
                let error = try #require(await settle(first).error)
                #expect(error.code == .malformedConfirmation)
                #expect(error.status == 201)
                #expect(try await second.outcome().serverID == "202")
                #expect(try store.pendingMutations().isEmpty)
                #expect(try store.snapshot("todos").syncMark?.invalidatedAt != nil)
                #expect(try store.mutationEvents().map(\.event.kind.name) == ["mutationProposed", "mutationProposed", "mutationConfirmed", "mutationConfirmed"])
            }
        }

        @Test("a PATCH of todo 2 answered 404 is rolled back and todos is invalidated, so the refetch removes the row the server no longer has")
        func editOfAGoneRowRollsBackAndRefetches() async throws {
            let world = MutationWorld()
            world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")])))
            world.transport.on(.patch, "/todos/2", reply: .json("{}", status: 404))
            try await world.withStore { store in
                try await store.refresh(todosResource)
                let pending = try await store.mutate(editTodo("2", title: "edited"))
                let error = try #require(await settle(pending).error)
                #expect(error.code == .rejected)
                #expect(error.status == 404)
                let kinds = try store.allRecords(collection: "todos").map(\.kind.name)
                #expect(kinds == ["fetched", "mutationProposed", "mutationRolledBack", "invalidated"])
                #expect(try store.snapshot("todos").syncMark?.invalidatedAt != nil)

                world.transport.on("/todos", reply: .json(todosJSON([(1, "one")])))
                try await store.refresh(todosResource)
                #expect(try store.snapshot("todos").rows == [serverTodo(1, "one")])
            }
        }

        @Test("DELETE /todos/2 of a row already deleted on the fixture server: 404, confirmed as alreadyGone, and row 2 stays deleted after a refetch")
        func deleteAgainstTheFixtureServer() async throws {
            try await FixtureServer.withRunning { server in
                var dependencies = Dependencies.test(transport: URLSessionTransport())
                dependencies.uuid = Dependencies.incrementingUUIDs()
                try await withTemporaryStore(configuration: .test(baseURL: server.baseURL), dependencies: dependencies) { store in
                    try await store.refresh(todosResource)
                    #expect(try store.ids("todos").prefix(3) == ["1", "2", "3"])
                    // Someone else deletes todo 2 first.
                    let url = try #require(URL(string: "/todos/2", relativeTo: server.baseURL)?.absoluteURL)
                    #expect(try await URLSessionTransport().send(HTTPRequest(method: .delete, url: url)).status == 200)

                    let pending = try await store.mutate(Mutation(name: "deleteTodo", ops: [.delete(id: "2", in: "todos")],
                                                                  request: .init(method: .delete, path: "/todos/2")))
                    let outcome = try await pending.outcome()
                    #expect(outcome.status == 404)
                    #expect(outcome.kind == .alreadyGone)
                    #expect(try store.ids("todos").prefix(3) == ["1", "3", "4"])
                    #expect(try store.snapshot("todos").rows.count == 199)
                    #expect(try store.mutationEvents().map(\.event.kind.name) == ["mutationProposed", "mutationConfirmed"])

                    try await store.refresh(todosResource)
                    #expect(try store.snapshot("todos").rows.count == 199)
                    #expect(try !store.ids("todos").contains("2"))
                    let writes = try await server.loggedWrites().filter { $0.method != "GET" }
                    #expect(writes == [
                        FixtureWrite(method: "DELETE", path: "/todos/2", status: 200, idempotency_key: nil),
                        FixtureWrite(method: "DELETE", path: "/todos/2", status: 404, idempotency_key: pending.id.description),
                    ])
                }
            }
        }

        @Test("POST, PUT, PATCH and DELETE whose first response is lost are sent again with the same Idempotency-Key; the fixture server replays its stored answer and applies each once")
        func lostResponsesAreReplayed() async throws {
            try await FixtureServer.withRunning { server in
                let transport = LosingTransport(URLSessionTransport())
                var dependencies = Dependencies.test(transport: transport)
                dependencies.uuid = Dependencies.incrementingUUIDs()
                try await withTemporaryStore(configuration: .test(baseURL: server.baseURL), dependencies: dependencies) { store in
                    try await store.refresh(todosResource)

                    let create = try await store.mutate(try createTodo("tmp-1", "Buy milk"))
                    let created = try await create.outcome()
                    #expect((created.status, created.kind, created.serverID) == (201, .applied, "201"))

                    let replaced = Row(id: "3", json: sortedJSON(["completed": true, "id": 3, "title": "replaced", "userId": 1]))
                    let put = try await store.mutate(Mutation(name: "replaceTodo", ops: [.upsert(replaced, in: "todos")],
                                                              request: .init(method: .put, path: "/todos/3", body: sortedJSON(["completed": true, "title": "replaced", "userId": 1]))))
                    let putOutcome = try await put.outcome()
                    #expect((putOutcome.status, putOutcome.rows) == (200, [replaced]))

                    let patch = try await store.mutate(editTodo("4", title: "patched"))
                    #expect(try await patch.outcome().status == 200)

                    let delete = try await store.mutate(Mutation(name: "deleteTodo", ops: [.delete(id: "5", in: "todos")],
                                                                 request: .init(method: .delete, path: "/todos/5")))
                    let deleted = try await delete.outcome()
                    #expect((deleted.status, deleted.kind) == (200, .applied))

                    let writes = try await server.loggedWrites().filter { $0.method != "GET" }
                    #expect(writes == [
                        FixtureWrite(method: "POST", path: "/todos", status: 201, idempotency_key: create.id.description),
                        FixtureWrite(method: "POST", path: "/todos", status: 201, idempotency_key: create.id.description),
                        FixtureWrite(method: "PUT", path: "/todos/3", status: 200, idempotency_key: put.id.description),
                        FixtureWrite(method: "PUT", path: "/todos/3", status: 200, idempotency_key: put.id.description),
                        FixtureWrite(method: "PATCH", path: "/todos/4", status: 200, idempotency_key: patch.id.description),
                        FixtureWrite(method: "PATCH", path: "/todos/4", status: 200, idempotency_key: patch.id.description),
                        FixtureWrite(method: "DELETE", path: "/todos/5", status: 200, idempotency_key: delete.id.description),
                        FixtureWrite(method: "DELETE", path: "/todos/5", status: 200, idempotency_key: delete.id.description),
                    ])
                    #expect(transport.replayed == 4)
                    // Applied once each: one new todo, todo 5 gone.
                    let serverTodos = try #require(try await server.getJSON("/todos") as? [[String: Any]])
                    #expect(serverTodos.count == 200)
                    #expect(serverTodos.filter { $0["title"] as? String == "Buy milk" }.count == 1)
                    #expect(try title("3", in: store) == "replaced")
                    #expect(try title("4", in: store) == "patched")
                    #expect(try !store.ids("todos").contains("5"))
                    #expect(try store.ids("todos").last == "201")
                    #expect(try store.mutationEvents().filter { if case .mutationRolledBack = $0.event { true } else { false } }.isEmpty)
                }
            }
        }
    }
}

/// A transport that loses the first response to each write (the request reaches the server,
/// the answer never comes back: `connectionLost`) and passes everything else to `base`.
final class LosingTransport: HTTPTransport {
    private let base: any HTTPTransport
    private let lostKeys = Mutex<Set<String>>([])
    private let replays = Mutex<Int>(0)

    init(_ base: any HTTPTransport) {
        self.base = base
    }

    /// Writes sent again after their first response was lost, whose answer said
    /// `Idempotent-Replayed: true`.
    var replayed: Int { replays.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        let response = try await base.send(request)
        guard request.method != .get, let key = request.headers["Idempotency-Key"] else { return response }
        if lostKeys.withLock({ $0.insert(key).inserted }) {
            throw TransportError(code: .connectionLost, message: "the response was lost (test transport)", request: request)
        }
        if response.headers["Idempotent-Replayed"] == "true" { replays.withLock { $0 += 1 } }
        return response
    }
}
