import Foundation
import Freshet

/// A typed query declaration: the key, the request, where the rows are in the response, how
/// each row's ID is found, and the `Decodable` type each row is shown as — what TanStack
/// Query's `queryOptions({ queryKey, queryFn })` declares, with the row type added.
///
/// A ``QueryModel`` observes the declaration's collection (``QueryKey/collection``) and
/// decodes its rows as `Value`.
///
/// ```swift
/// struct Todo: Decodable, Sendable { var id: Int; var title: String; var completed: Bool }
///
/// enum Queries {
///     static let todos = QueryDefinition<Todo>(QueryKey("todos"), path: "/todos", rows: .rootArray, id: .field("id"))
///     static func todo(_ id: Int) -> QueryDefinition<Todo> {   // GET /todos/3 into "todo{id=3}"
///         QueryDefinition(QueryKey("todo", ["id": .int(id)]), path: "/todos/{id}", rows: .document, id: .field("id"))
///     }
/// }
/// ```
///
/// Declarations are values: make them once (a `static let`, or a function of the key's
/// parameters) and hand them to as many models as need them. Two models of the same
/// declaration observe the same collection and share its requests (the store deduplicates
/// refreshes in flight).
public struct QueryDefinition<Value: Decodable & Sendable>: Sendable {
    /// The query key; its ``QueryKey/collection`` names the collection the rows go to.
    public let key: QueryKey
    /// The request and row extraction rules (collection = `key.collection`).
    public let resource: Resource
    /// How one stored row becomes a `Value`. The default decodes the row's JSON with
    /// ``RowDecoder`` (a default `JSONDecoder`'s results). Called once per row version: a row
    /// whose stored bytes did not change keeps its decoded value.
    public let decode: @Sendable (Row) throws -> Value
    /// Rows that `decode` refuses are handed to this closure, when set, before they are
    /// reported: the read-time migration of a row stored by an older app version (docs/swiftui.md,
    /// "Schema drift"). Return the row as `Value` (for example decode the old shape and convert
    /// it), or throw to report the row as undecodable (the original decoding error is reported).
    public let upgrade: (@Sendable (Row) throws -> Value)?

    /// A query of the collection `key.collection`, fetched from `path` (each `{name}` replaced
    /// by that key parameter, the others sent as query items — ``Freshet/Resource/keyed(_:path:query:rows:id:paging:freshness:)``).
    ///
    /// - Parameters:
    ///   - rows: where the rows are in the response body.
    ///   - id: how a row's ID is found in its JSON object.
    ///   - paging: how the next page is found (``Resource/Paging/none`` by default: one request).
    ///   - freshness: when the rows are stale; nil: ``Configuration/defaultFreshness``.
    ///   - decode: see ``decode``; nil: the row's JSON as `Value` with ``RowDecoder``.
    ///   - upgrade: see ``upgrade``.
    public init(_ key: QueryKey, path: String, query: [String: String] = [:], rows: Resource.RowLocation, id: Resource.RowIdentity,
                paging: Resource.Paging = .none, freshness: FreshnessPolicy? = nil, as type: Value.Type = Value.self,
                decode: (@Sendable (Row) throws -> Value)? = nil, upgrade: (@Sendable (Row) throws -> Value)? = nil) {
        self.init(key: key, resource: .keyed(key, path: path, query: query, rows: rows, id: id, paging: paging, freshness: freshness),
                  decode: decode, upgrade: upgrade)
    }

    /// A query of an existing ``Resource``: the key is the resource's collection name, without parameters.
    public init(_ resource: Resource, as type: Value.Type = Value.self,
                decode: (@Sendable (Row) throws -> Value)? = nil, upgrade: (@Sendable (Row) throws -> Value)? = nil) {
        self.init(key: QueryKey(resource.collection), resource: resource, decode: decode, upgrade: upgrade)
    }

    /// The declaration of `resource` under `key` (``InfiniteQueryDefinition`` makes its resource
    /// load pages on demand and wraps it here).
    init(key: QueryKey, resource: Resource, decode: (@Sendable (Row) throws -> Value)?, upgrade: (@Sendable (Row) throws -> Value)?) {
        self.key = key
        self.resource = resource
        self.decode = decode ?? { row in try RowDecoder().decode(Value.self, from: row.json) }
        self.upgrade = upgrade
    }

    /// The collection the rows are stored in.
    public var collection: String { resource.collection }
}
