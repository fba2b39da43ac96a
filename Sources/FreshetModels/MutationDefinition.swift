import Foundation
import Freshet

/// A typed mutation declaration: from an input value, the request that performs it on the
/// server, the optimistic ops that show it at once, and the query keys it invalidates when
/// the server confirms — TanStack Query's `useMutation({ mutationFn, onMutate, onSuccess:
/// invalidateQueries })`, as data the store can make durable (``Freshet/Mutation``).
///
/// ```swift
/// static let toggle = MutationDefinition<Todo>("toggleTodo",
///     request: { todo in try .init(method: .patch, path: "/todos/\(todo.id)", json: ["completed": !todo.completed]) },
///     optimistic: { todo in [try Queries.todos.upsert(Todo(id: todo.id, title: todo.title, completed: !todo.completed), id: String(todo.id))] },
///     invalidates: { todo in [QueryKey("todo", ["id": .int(todo.id)])] })
/// ```
public struct MutationDefinition<Input: Sendable>: Sendable {
    /// The mutation's name, logged with its `mutationProposed` event (``Freshet/Mutation/name``).
    public let name: String
    /// Mutations of one queue are sent one at a time, in LSN order (``Freshet/Mutation/queue``).
    public let queue: String
    /// The HTTP request that performs the mutation for an input.
    public let request: @Sendable (Input) throws -> Mutation.Request
    /// What to show at once for an input (upserts and deletes on one or more collections).
    public let optimistic: @Sendable (Input) throws -> [Mutation.Op]
    /// The query keys marked stale when the server confirms (observed ones refetch at once).
    public let invalidates: @Sendable (Input) -> [QueryKey]
    /// How the server's 2xx answer folds in; nil: ``Freshet/Mutation``'s default (for POST,
    /// PUT and PATCH the response row replaces the first upserted row).
    public let confirmation: (@Sendable (Input) -> Mutation.Confirmation)?

    public init(_ name: String, queue: String = "default",
                request: @escaping @Sendable (Input) throws -> Mutation.Request,
                optimistic: @escaping @Sendable (Input) throws -> [Mutation.Op] = { _ in [] },
                invalidates: @escaping @Sendable (Input) -> [QueryKey] = { _ in [] },
                confirmation: (@Sendable (Input) -> Mutation.Confirmation)? = nil) {
        self.name = name
        self.queue = queue
        self.request = request
        self.optimistic = optimistic
        self.invalidates = invalidates
        self.confirmation = confirmation
    }

    /// The ``Freshet/Mutation`` for `input`, ready for ``Freshet/Store/mutate(_:)``.
    /// - Throws: ``Freshet/MutationError/invalidMutation`` when `request` or `optimistic`
    ///   throws for `input` (typically an `EncodingError`), naming the mutation and the error.
    public func mutation(for input: Input) throws(MutationError) -> Mutation {
        do {
            return Mutation(name: name, ops: try optimistic(input), request: try request(input),
                            invalidates: invalidates(input).map(\.collection), confirmation: confirmation?(input), queue: queue)
        } catch {
            throw MutationError(.invalidMutation, "\(name): cannot build the mutation: \(error)")
        }
    }
}
