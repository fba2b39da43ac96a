import Foundation
import Freshet
import FreshetHTTP
import FreshetTesting
import Synchronization
import Testing
import TestSupport

/// The optimistic-mutation suites (Tests/FreshetTests/Mutations). Every suite is nested here,
/// so `swift test --filter MutationTests` runs exactly them.
@Suite("Optimistic mutations", .scaledTimeLimit(minutes: 2))
enum MutationTests {}

/// The deterministic world a mutation test runs in: a `FreshetTesting` test clock (backoff
/// sleeps and event timestamps), a scripted network stamped with that clock, the seeded random
/// source of seed 0, and mutation IDs `00000000-0000-0000-0000-000000000001`, `…0002`, … in
/// the order they are made.
struct MutationWorld: Sendable {
    let clock: FreshetTesting.TestClock
    let transport: ScriptedTransport
    let dependencies: Dependencies

    init() {
        let clock = FreshetTesting.TestClock()
        let transport = ScriptedTransport(clock: clock)
        var dependencies = Dependencies.test(clock: clock, transport: transport, seed: 0)
        dependencies.uuid = Dependencies.incrementingUUIDs()
        self.clock = clock
        self.transport = transport
        self.dependencies = dependencies
    }

    /// Opens a store in a fresh temporary directory with this world's dependencies, runs
    /// `body`, then closes the store and removes the directory.
    func withStore<R>(configure: (inout Configuration) -> Void = { _ in }, _ body: (Store) async throws -> R) async throws -> R {
        var configuration = Configuration.test()
        configure(&configuration)
        return try await withTemporaryStore(configuration: configuration, dependencies: dependencies, body)
    }

    /// The requests sent with `method`, in order.
    func requests(_ method: HTTPMethod) -> [HTTPRequest] {
        transport.requests.map(\.request).filter { $0.method == method }
    }
}

/// The JSONPlaceholder-style `todos` list: the body is the array, each row's ID its `id`.
let todosResource = Resource(collection: "todos", path: "/todos", rows: .rootArray, id: .field("id"))

/// The mutation ID the `n`-th call of `Dependencies.incrementingUUIDs()` makes.
func mutationID(_ n: UInt8) -> MutationID {
    MutationID(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, n)))
}

/// `object` as JSON with sorted keys and unescaped slashes: the form the store keeps rows in.
func sortedJSON(_ object: [String: any Sendable]) -> Data {
    do {
        return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    } catch {
        preconditionFailure("test JSON \(object) cannot be encoded: \(error)")
    }
}

/// A server todo as JSON text: `{"completed":false,"id":1,"title":"…","userId":1}`.
func todoJSON(_ id: Int, _ title: String) -> String {
    String(decoding: sortedJSON(["completed": false, "id": id, "title": title, "userId": 1]), as: UTF8.self)
}

/// A JSON array of server todos.
func todosJSON(_ todos: [(Int, String)]) -> String {
    "[" + todos.map { todoJSON($0.0, $0.1) }.joined(separator: ",") + "]"
}

/// The server's todo as the store keeps it (the response object, keys sorted).
func serverTodo(_ id: Int, _ title: String) -> Row {
    Row(id: String(id), json: Data(todoJSON(id, title).utf8))
}

/// `POST /todos` creating a todo shown at once as the provisional row `provisionalID`.
func createTodo(_ provisionalID: String, _ title: String, invalidates: [String] = []) throws -> Mutation {
    struct NewTodo: Encodable {
        var completed: Bool
        var title: String
        var userId: Int
    }
    let row = Row(id: provisionalID, json: sortedJSON(["completed": false, "id": provisionalID, "title": title, "userId": 1]))
    return Mutation(name: "createTodo", ops: [.upsert(row, in: "todos")],
                    request: try .init(method: .post, path: "/todos", json: NewTodo(completed: false, title: title, userId: 1)),
                    invalidates: invalidates)
}

/// `PATCH /todos/<id>` with the body `{"id": <id>, "title": <title>}`, shown at once as the
/// row `id` with the new title. `id` may be a provisional ID (then the body names it too).
func editTodo(_ id: String, title: String) -> Mutation {
    let jsonID: any Sendable = Int(id) ?? id
    let row = Row(id: id, json: sortedJSON(["completed": false, "id": jsonID, "title": title, "userId": 1]))
    return Mutation(name: "editTodo", ops: [.upsert(row, in: "todos")],
                    request: .init(method: .patch, path: "/todos/\(id)", body: sortedJSON(["id": jsonID, "title": title])))
}

/// The `title` of a todo row.
func title(of row: Row) throws -> String {
    struct Titled: Decodable { let title: String }
    return try row.decode(Titled.self).title
}

/// The title of the row `id` of `collection` as the store projects it now, or nil.
func title(_ id: String, in store: Store, collection: String = "todos") throws -> String? {
    try store.snapshot(collection).rows.first { $0.id == id }.map(title(of:))
}

/// The outcome of `pending`, or the error it ends with.
func settle(_ pending: PendingMutation) async -> Result<MutationOutcome, MutationError> {
    do {
        return .success(try await pending.outcome())
    } catch {
        return .failure(error)
    }
}

extension Result where Failure == MutationError {
    /// The error, or nil when it succeeded.
    var error: MutationError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// Consumes `observation` in a task and returns every snapshot it got, up to and including
/// the first one for which `isLast` holds (or up to the end of the observation).
func recordSnapshots(_ observation: CollectionObservation, until isLast: @escaping @Sendable (Snapshot) -> Bool) -> Task<[Snapshot], any Error> {
    Task {
        var seen: [Snapshot] = []
        for try await snapshot in observation {
            seen.append(snapshot)
            if isLast(snapshot) { break }
        }
        return seen
    }
}

/// The mutation events of the store's log, in LSN order.
extension Store {
    func mutationEvents() throws -> [(lsn: LSN, event: Event)] {
        try allRecords().compactMap { record in
            switch record.event {
            case .mutationProposed, .mutationConfirmed, .mutationRolledBack: (record.lsn, record.event)
            default: nil
            }
        }
    }
}

/// A transport that refuses every request (`cannotConnect`) until it is switched on, then
/// passes requests to `base`: "the device is offline" for a real transport.
final class SwitchableTransport: HTTPTransport {
    private let base: any HTTPTransport
    private let online = Atomic<Bool>(false)
    private let sent = Mutex<[HTTPRequest]>([])

    init(_ base: any HTTPTransport) {
        self.base = base
    }

    func goOnline() {
        online.store(true, ordering: .releasing)
    }

    /// Every request that reached this transport, in order, online or not.
    var requests: [HTTPRequest] { sent.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        sent.withLock { $0.append(request) }
        guard online.load(ordering: .acquiring) else {
            throw TransportError(code: .cannotConnect, message: "offline (test transport)", request: request)
        }
        return try await base.send(request)
    }
}

/// One entry of the fixture server's request log, with the `Idempotency-Key` it received
/// (the shared `FixtureServer.LoggedRequest` does not decode that field).
struct FixtureWrite: Decodable, Equatable {
    let method: String
    let path: String
    let status: Int
    let idempotency_key: String?
}

extension FixtureServer {
    /// The API requests served so far (`GET /requests` on the control port), with their keys.
    func loggedWrites() async throws -> [FixtureWrite] {
        let response = try await URLSessionTransport().send(HTTPRequest(url: controlURL.appendingPathComponent("requests")))
        guard response.status == 200 else {
            throw Failure(description: "GET /requests answered \(response.status)")
        }
        return try JSONDecoder().decode([FixtureWrite].self, from: response.body)
    }

    /// `GET path` on the API port, decoded as JSON; `timeout`: the request's idle timeout (nil: the transport's 30 s).
    func getJSON(_ path: String, timeout: Duration? = nil) async throws -> Any {
        let url = try #require(URL(string: path, relativeTo: baseURL)?.absoluteURL)
        let response = try await URLSessionTransport().send(HTTPRequest(url: url, timeout: timeout))
        guard response.status == 200 else {
            throw Failure(description: "GET \(path) answered \(response.status)")
        }
        return try JSONSerialization.jsonObject(with: response.body)
    }
}
