import Foundation
import Freshet
import FreshetHTTP
import FreshetTesting
import Testing

extension MutationTests {
    /// Mutations against the fixture server (real JSONPlaceholder data on loopback) with the
    /// live URLSession transport.
    @Suite("Against the fixture server")
    struct FixtureServerMutations {
        @Test("PATCH /todos/1 is confirmed with the server's row; POST /todos gets id 201; the server logged each Idempotency-Key")
        func patchAndCreate() async throws {
            try await FixtureServer.withRunning { server in
                var dependencies = Dependencies.test(transport: URLSessionTransport())
                dependencies.uuid = Dependencies.incrementingUUIDs()
                try await withTemporaryStore(configuration: .test(baseURL: server.baseURL), dependencies: dependencies) { store in
                    try await store.refresh(todosResource)
                    #expect(try store.snapshot("todos").rows.count == 200)
                    #expect(try title("1", in: store) == "delectus aut autem")

                    // PATCH /todos/1: the overlay at once, then the server's merged row.
                    let edit = Mutation(
                        name: "renameTodo",
                        ops: [.upsert(Row(id: "1", json: sortedJSON(["completed": false, "id": 1, "title": "patched by freshet", "userId": 1])), in: "todos")],
                        request: .init(method: .patch, path: "/todos/1", body: sortedJSON(["title": "patched by freshet"])))
                    let patch = try await store.mutate(edit)
                    let patched = try await patch.outcome()
                    #expect(patched.status == 200)
                    #expect(patched.serverID == nil)
                    #expect(patched.rows == [Row(id: "1", json: sortedJSON(["completed": false, "id": 1, "title": "patched by freshet", "userId": 1]))])
                    #expect(try title("1", in: store) == "patched by freshet")
                    let serverRow = try #require(try await server.getJSON("/todos/1") as? [String: Any])
                    #expect(serverRow["title"] as? String == "patched by freshet")

                    // POST /todos: the provisional row becomes 201.
                    let create = try await store.mutate(try createTodo("tmp-1", "Buy milk"))
                    let created = try await create.outcome()
                    #expect(created.status == 201)
                    #expect(created.serverID == "201")
                    let rows = try store.snapshot("todos").rows
                    #expect(rows.count == 201)
                    #expect(rows.last == Row(id: "201", json: sortedJSON(["completed": false, "id": 201, "title": "Buy milk", "userId": 1])))
                    #expect(!rows.contains { $0.id == "tmp-1" })
                    #expect(try store.pendingMutations().isEmpty)

                    let writes = try await server.loggedWrites().filter { $0.method != "GET" }
                    #expect(writes == [
                        FixtureWrite(method: "PATCH", path: "/todos/1", status: 200, idempotency_key: patch.id.description),
                        FixtureWrite(method: "POST", path: "/todos", status: 201, idempotency_key: create.id.description),
                    ])
                    #expect([patch.id, create.id] == [mutationID(1), mutationID(2)])
                }
            }
        }
    }
}
