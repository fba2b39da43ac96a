import Foundation
import FreshetHTTP

/// How to fetch one collection: the request, where the rows are in the response body, how
/// each row's ID is found, and how pages follow each other.
///
/// ```swift
/// // PokeAPI: {"count":151,"next":"…?offset=20&limit=20","results":[{"name":…,"url":"/api/v2/pokemon/1/"}]}
/// let pokemon = Resource.list("pokemon", path: "/api/v2/pokemon/", query: ["limit": "50"],
///                             rowsAt: "results", id: .lastPathComponent(of: "url"), paging: .nextField("next"))
/// // One document in a collection of its own (freshness and validators are per collection):
/// let pikachu = Resource.document("pokemon/25", path: "/api/v2/pokemon/25/")
/// ```
public struct Resource: Sendable, Hashable {
    /// Where the rows are in a response body.
    public enum RowLocation: Sendable, Hashable {
        /// The array under this top-level key (PokeAPI's `results`).
        case array(at: String)
        /// The body is the array (JSONPlaceholder).
        case rootArray
        /// The body is one row (a detail document); it is upserted, other rows stay.
        case document
    }

    /// How a row's ID is found in its JSON object.
    public enum RowIdentity: Sendable, Hashable {
        /// The value of this key: a string, or a number written in decimal.
        case field(String)
        /// The last path component of the URL under this key (`"/api/v2/pokemon/25/"` → `"25"`).
        case lastPathComponent(of: String)
    }

    /// How the next page is found.
    public enum Paging: Sendable, Hashable {
        /// One request; the rows replace the collection.
        case none
        /// The top-level key holding the next page's URL, null on the last page (PokeAPI `next`).
        case nextField(String)
        /// The `Link` header's `rel="next"` URL (RFC 8288; GitHub, json-server).
        case linkHeader
        /// An opaque cursor: the top-level body key `field` holds the next page's cursor (a
        /// string or a number, as written), which is sent as query parameter `parameter` of the
        /// first request's URL (replacing it if present). `null`, a missing key or `""` (Slack's
        /// convention) means the last page; any other JSON type is ``FetchError/malformedBody``.
        case cursor(field: String, parameter: String)
    }

    /// Which pages ``Store/refresh(_:)`` fetches for a paged resource.
    public enum PageLoading: Sendable, Hashable {
        /// Every page, following next links to the end (a whole list, such as a Pokédex).
        case all
        /// Pages on demand (an infinite query): a first refresh fetches the first page,
        /// ``Store/loadMore(_:)`` appends the next one, and a later refresh revalidates the
        /// pages loaded so far, in order, and no more (docs/queries.md, "Paging").
        case onDemand
    }

    /// The collection the rows go to.
    public var collection: String
    /// An absolute URL, or a path resolved against ``Configuration/baseURL``.
    public var path: String
    /// Query parameters, sent sorted by name so the same parameters always make the same URL.
    public var query: [String: String]
    public var rows: RowLocation
    public var id: RowIdentity
    public var paging: Paging
    /// Whether a refresh walks every page or only the pages loaded so far; ignored when
    /// ``paging`` is ``Paging/none``.
    public var pageLoading: PageLoading
    /// When the rows are stale; nil: ``Configuration/defaultFreshness``.
    public var freshness: FreshnessPolicy?
    /// How long the collection is kept once nobody observes it; nil: ``Configuration/gcTime``.
    /// Applies once the store knows the resource (observed, refreshed or registered in this process).
    public var gcTime: GCTime?

    public init(collection: String, path: String, query: [String: String] = [:], rows: RowLocation, id: RowIdentity, paging: Paging = .none, freshness: FreshnessPolicy? = nil,
                pageLoading: PageLoading = .all) {
        self.collection = collection
        self.pageLoading = pageLoading
        self.path = path
        self.query = query
        self.rows = rows
        self.id = id
        self.paging = paging
        self.freshness = freshness
    }

    /// A list collection, by default in PokeAPI's shape (`results`, IDs from `url`, `next` paging).
    public static func list(
        _ collection: String, path: String, query: [String: String] = [:], rowsAt key: String = "results",
        id: RowIdentity = .lastPathComponent(of: "url"), paging: Paging = .nextField("next"), freshness: FreshnessPolicy? = nil
    ) -> Resource {
        Resource(collection: collection, path: path, query: query, rows: .array(at: key), id: id, paging: paging, freshness: freshness)
    }

    /// A list whose pages load on demand (an infinite query, TanStack's `useInfiniteQuery`):
    /// ``list(_:path:query:rowsAt:id:paging:freshness:)`` with ``PageLoading/onDemand``.
    ///
    /// ```swift
    /// let pokemon = Resource.infinite("pokemon", path: "/api/v2/pokemon/", query: ["limit": "20"])
    /// try await store.refresh(pokemon)          // page 1: rows 1–20, query.hasMore == true
    /// try await store.loadMore(pokemon)         // page 2: rows 1–40
    /// ```
    public static func infinite(
        _ collection: String, path: String, query: [String: String] = [:], rowsAt key: String = "results",
        id: RowIdentity = .lastPathComponent(of: "url"), paging: Paging = .nextField("next"), freshness: FreshnessPolicy? = nil
    ) -> Resource {
        Resource(collection: collection, path: path, query: query, rows: .array(at: key), id: id, paging: paging, freshness: freshness,
                 pageLoading: .onDemand)
    }

    /// Whether the resource is paged (a list with a ``Paging`` other than `none`).
    var isPaged: Bool { paging != .none && rows != .document }

    /// Whether the resource loads its pages on demand (``PageLoading/onDemand`` and paged).
    var loadsPagesOnDemand: Bool { isPaged && pageLoading == .onDemand }

    /// One document upserted as a row of `collection` (for example one pokemon's details).
    public static func document(_ collection: String, path: String, id: RowIdentity = .field("id"), freshness: FreshnessPolicy? = nil) -> Resource {
        Resource(collection: collection, path: path, rows: .document, id: id, freshness: freshness)
    }

    /// The in-flight deduplication key: the collection and the first request's URL with its
    /// query sorted, so the same parameters in another order make the same key.
    public func requestKey(relativeTo base: URL?) throws(FetchError) -> String {
        let url = try self.url(relativeTo: base)
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return collection + " " + url.absoluteString }
        if let items = components.queryItems {
            components.queryItems = items.sorted { ($0.name, $0.value ?? "") < ($1.name, $1.value ?? "") }
        }
        return collection + " " + (components.url?.absoluteString ?? url.absoluteString)
    }

    /// The first request's URL: `path` resolved against `base`, with the query sorted by name.
    /// - Throws: ``FetchError/invalidURL`` when they do not make an absolute http(s) URL.
    public func url(relativeTo base: URL?) throws(FetchError) -> URL {
        guard let resolved = URL(string: path, relativeTo: base)?.absoluteURL,
              var components = URLComponents(url: resolved, resolvingAgainstBaseURL: true),
              let scheme = components.scheme, scheme == "http" || scheme == "https"
        else {
            // Printed redacted (default secret names): the path or base may hold a credential.
            let redaction = URLRedaction()
            let context = base.map { " relative to \(redaction.string(for: $0))" } ?? " and no baseURL is configured"
            throw FetchError(.invalidURL, "\(redaction.redact(path).debugDescription) is not an http(s) URL\(context)", url: redaction.redact(path))
        }
        if !query.isEmpty {
            let existing = components.queryItems ?? []
            components.queryItems = existing + query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        }
        guard let url = components.url else {
            throw FetchError(.invalidURL, "cannot build a URL from \(URLRedaction().redact(path).debugDescription) and its query", url: URLRedaction().redact(path))
        }
        return url
    }
}
