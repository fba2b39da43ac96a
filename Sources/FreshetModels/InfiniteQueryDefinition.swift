import Foundation
import Freshet

/// A typed infinite-query declaration: a ``QueryDefinition`` whose pages load on demand —
/// what TanStack Query's `infiniteQueryOptions({ queryKey, queryFn, getNextPageParam })`
/// declares, with the next page read from the response as ``Freshet/Resource/Paging`` says
/// (a next URL field, a `Link` header or a cursor) instead of a closure.
///
/// ```swift
/// struct PokemonEntry: Decodable, Sendable { var name: String; var url: String }
///
/// // GET /api/v2/pokemon/?limit=20, then the URL in "next", 20 rows a page.
/// static let pokemon = InfiniteQueryDefinition<PokemonEntry>(QueryKey("pokemon"), path: "/api/v2/pokemon/", query: ["limit": "20"])
/// ```
///
/// The resource is ``Freshet/Resource/PageLoading/onDemand``
/// (``Freshet/Resource/infinite(_:path:query:rowsAt:id:paging:freshness:)``): a refresh fetches
/// or revalidates the pages loaded so far, ``Freshet/Store/loadMore(_:)`` appends the next one.
/// A ``InfiniteQueryModel`` shows it; a ``QueryModel`` of ``query`` shows the same rows.
public struct InfiniteQueryDefinition<Value: Decodable & Sendable>: Sendable {
    /// The declaration as a plain query: its key, decoding and upgrade, and a resource whose
    /// ``Freshet/Resource/pageLoading`` is ``Freshet/Resource/PageLoading/onDemand``.
    public let query: QueryDefinition<Value>

    /// A list of collection `key.collection` whose pages load on demand, by default in
    /// PokeAPI's shape (rows under `results`, IDs from `url`, the next page's URL in `next`).
    ///
    /// - Parameters:
    ///   - path: the first page's path (each `{name}` replaced by that key parameter, the
    ///     others sent as query items — ``Freshet/Resource/keyed(_:path:query:rows:id:paging:freshness:)``).
    ///   - query: query items of the first page (such as the page size, `["limit": "20"]`).
    ///   - rows: where the rows are in a page's body.
    ///   - id: how a row's ID is found; IDs are unique across pages (a later page's row wins).
    ///   - paging: how the next page is found. With ``Freshet/Resource/Paging/none`` the list
    ///     has one page: the first load fetches it and ``InfiniteQueryModel/hasMore`` stays false.
    ///   - freshness, decode, upgrade: as for ``QueryDefinition``.
    public init(_ key: QueryKey, path: String, query: [String: String] = [:], rows: Resource.RowLocation = .array(at: "results"),
                id: Resource.RowIdentity = .lastPathComponent(of: "url"), paging: Resource.Paging = .nextField("next"),
                freshness: FreshnessPolicy? = nil, as type: Value.Type = Value.self,
                decode: (@Sendable (Row) throws -> Value)? = nil, upgrade: (@Sendable (Row) throws -> Value)? = nil) {
        let resource = Resource.keyed(key, path: path, query: query, rows: rows, id: id, paging: paging, freshness: freshness)
        self.init(key: key, resource: resource, decode: decode, upgrade: upgrade)
    }

    /// An infinite query of an existing paged ``Freshet/Resource`` (its key is the collection
    /// name, without parameters); its ``Freshet/Resource/pageLoading`` is set to
    /// ``Freshet/Resource/PageLoading/onDemand``.
    public init(_ resource: Resource, as type: Value.Type = Value.self,
                decode: (@Sendable (Row) throws -> Value)? = nil, upgrade: (@Sendable (Row) throws -> Value)? = nil) {
        self.init(key: QueryKey(resource.collection), resource: resource, decode: decode, upgrade: upgrade)
    }

    private init(key: QueryKey, resource: Resource, decode: (@Sendable (Row) throws -> Value)?, upgrade: (@Sendable (Row) throws -> Value)?) {
        var resource = resource
        resource.pageLoading = .onDemand
        query = QueryDefinition(key: key, resource: resource, decode: decode, upgrade: upgrade)
    }

    /// The query key; its ``Freshet/QueryKey/collection`` names the collection the rows go to.
    public var key: QueryKey { query.key }
    /// The request, row extraction and paging rules (pages on demand).
    public var resource: Resource { query.resource }
    /// The collection the rows of every loaded page are stored in.
    public var collection: String { query.collection }
}
