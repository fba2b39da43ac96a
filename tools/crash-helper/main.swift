// freshet-crash-helper STORE_DIR BASE_URL
//
// A process for the mutation crash test (Tests/FreshetTests/Mutations/MutationCrashTests.swift):
// it opens the store in STORE_DIR against the server at BASE_URL, registers the "todos"
// resource, proposes one `POST /todos` mutation, prints `proposed <mutation id>` and flushes,
// then waits forever, so the test can kill it with SIGKILL while the request is in flight.
// Exit status 2: bad arguments or the store could not be opened or written.
import Foundation
import Freshet

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("freshet-crash-helper: \(message)\n".utf8))
    exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let baseURL = URL(string: arguments[2]) else {
    fail("usage: freshet-crash-helper STORE_DIR BASE_URL")
}

let store: Store
do {
    store = try Store(directory: URL(fileURLWithPath: arguments[1]), configuration: Configuration(durability: .full, baseURL: baseURL))
} catch {
    fail("cannot open \(arguments[1]): \(error)")
}
store.register(Resource(collection: "todos", path: "/todos", rows: .rootArray, id: .field("id")))

struct NewTodo: Encodable {
    var userId: Int
    var title: String
    var completed: Bool
}

do {
    let todo = NewTodo(userId: 1, title: "written before the crash", completed: false)
    let create = Mutation(
        name: "createTodo",
        ops: [.upsert(try Row(id: "tmp-crash", encoding: todo), in: "todos")],
        request: try .init(method: .post, path: "/todos", json: todo)
    )
    let pending = try await store.mutate(create)
    // Unbuffered: one write(2) straight to the pipe, nothing left in a stdio buffer.
    FileHandle.standardOutput.write(Data("proposed \(pending.id)\n".utf8))
} catch {
    fail("cannot propose: \(error)")
}

// Wait to be killed; the mutation queue keeps working meanwhile.
while true {
    try await Task.sleep(for: .seconds(3600))
}
