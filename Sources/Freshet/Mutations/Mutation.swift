import Foundation
import FreshetHTTP

/// An optimistic write: what to show at once (ops on one or more collections), the request
/// that makes it real on the server, and what to do when the server accepts it.
///
/// ```swift
/// let draft = "tmp-\(UUID())"
/// let create = Mutation(name: "createTodo",
///     ops: [.upsert(try Row(id: draft, encoding: Todo(title: "Buy milk")), in: "todos")],
///     request: try .init(method: .post, path: "/todos", json: Todo(title: "Buy milk")),
///     invalidates: ["todos-count"])
/// let pending = try await store.mutate(create)   // durable before the request leaves
/// let outcome = try await pending.outcome()      // confirmed, or throws MutationError.rejected
/// ```
public struct Mutation: Sendable, Hashable {
    /// One optimistic change to one collection.
    public struct Op: Sendable, Hashable {
        public enum Change: Sendable, Hashable {
            /// Show this row: replaces the row with its ID in place, or is appended.
            case upsert(Row)
            /// Hide the row with this ID.
            case delete(id: String)
        }
        public var collection: String
        public var change: Change

        public static func upsert(_ row: Row, in collection: String) -> Op { Op(collection: collection, change: .upsert(row)) }
        public static func delete(id: String, in collection: String) -> Op { Op(collection: collection, change: .delete(id: id)) }

        public init(collection: String, change: Change) {
            self.collection = collection
            self.change = change
        }

        var rowID: String {
            switch change {
            case .upsert(let row): row.id
            case .delete(let id): id
            }
        }
    }

    /// The HTTP request that performs the mutation on the server.
    public struct Request: Sendable, Hashable {
        public var method: HTTPMethod
        /// An absolute URL, or a path resolved against ``Configuration/baseURL``. A provisional
        /// row ID in it is replaced by the server's ID once the mutation that created it is confirmed.
        public var path: String
        /// Extra headers (the store adds `Idempotency-Key`, `Content-Type` and authentication).
        public var headers: [String: String]
        /// The JSON body, or nil. String values equal to a confirmed provisional ID are
        /// replaced by the server's ID before sending.
        public var body: Data?

        public init(method: HTTPMethod, path: String, headers: [String: String] = [:], body: Data? = nil) {
            self.method = method
            self.path = path
            self.headers = headers
            self.body = body
        }

        /// A request whose body is `json` encoded with sorted keys.
        public init(method: HTTPMethod, path: String, headers: [String: String] = [:], json: some Encodable) throws {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            self.init(method: method, path: path, headers: headers, body: try encoder.encode(json))
        }
    }

    /// What the server's 2xx answer means for the rows.
    public enum Confirmation: Sendable, Hashable {
        /// The body is the row as the server now has it; it replaces `provisionalID` in
        /// `collection` (the server may assign a different ID, read from `idField`).
        case responseRow(collection: String, provisionalID: String, idField: String)
        /// Nothing to fold: the overlay goes, and the collections in `invalidates` refetch.
        case none
    }

    public var name: String
    public var ops: [Op]
    public var request: Request
    /// Collections marked stale when the server confirms (observed ones refresh at once).
    public var invalidates: [String]
    /// See ``Confirmation``. The default: for POST, PUT and PATCH, the response row replaces
    /// the first upserted row (ID field `id`); otherwise `.none`.
    public var confirmation: Confirmation
    /// Mutations of one queue are sent one at a time, in LSN order. Default `"default"`.
    public var queue: String

    public init(name: String, ops: [Op], request: Request, invalidates: [String] = [], confirmation: Confirmation? = nil, queue: String = "default") {
        self.name = name
        self.ops = ops
        self.request = request
        self.invalidates = invalidates
        self.queue = queue
        if let confirmation {
            self.confirmation = confirmation
        } else if [.post, .put, .patch].contains(request.method),
                  let first = ops.first(where: { if case .upsert = $0.change { true } else { false } }) {
            self.confirmation = .responseRow(collection: first.collection, provisionalID: first.rowID, idField: "id")
        } else {
            self.confirmation = .none
        }
    }
}
