import Foundation
@testable import Freshet
import FreshetHTTP
import Testing

/// Infinite queries end to end: the fixture server (tools/fixture-server) serving the real
/// PokeAPI list and JSONPlaceholder comments on loopback, the live URLSession transport.
@Suite("Paging against the fixture server: loadMore over PokeAPI next URLs and Link headers")
struct PagingFixtureServerTests {
    static let pokemon = Resource.infinite("pokemon", path: "/api/v2/pokemon/", query: ["limit": "20"])

    @Test("paging the 151 pokemon 20 at a time via loadMore yields IDs 1–151 once each, in order, hasMore false exactly after the last page")
    func pokemonTwentyAtATime() async throws {
        try await withServerAndStore { server, store in
            var hasMore: [Bool] = []
            var counts: [Int] = []
            #expect(try await store.loadMore(Self.pokemon) == .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 20, lsn: 1)))
            while true {
                let snapshot = try store.snapshot("pokemon")
                hasMore.append(snapshot.query.hasMore)
                counts.append(snapshot.rows.count)
                guard snapshot.query.hasMore else { break }
                guard case .loaded = try await store.loadMore(Self.pokemon) else {
                    Issue.record("loadMore found no page while hasMore was true")
                    break
                }
            }
            #expect(hasMore == Array(repeating: true, count: 7) + [false])
            #expect(counts == [20, 40, 60, 80, 100, 120, 140, 151])
            let snapshot = try store.snapshot("pokemon")
            #expect(snapshot.rows.map(\.id) == (1...151).map(String.init))
            #expect(try snapshot.rows[24].decode(PokemonEntry.self) == PokemonEntry(name: "pikachu", url: "/api/v2/pokemon/25/"))
            #expect(try await store.loadMore(Self.pokemon) == .endReached)
            #expect(try await server.requests().map(\.path) == pokemonListTargets)

            // A refresh revalidates the 8 loaded pages with their own validators: 8 × 304.
            let summary = try await store.refresh(Self.pokemon)
            #expect(summary == RefreshSummary(pages: 8, notModified: 8, rows: 0, lsn: 16))
            let second = try await server.requests().dropFirst(8)
            #expect(second.map(\.path) == pokemonListTargets)
            #expect(second.allSatisfy { $0.status == 304 && $0.if_none_match != nil })
            #expect(try store.snapshot("pokemon").rows.map(\.id) == (1...151).map(String.init))
            #expect(try store.verify().problems.isEmpty)
        }
    }

    static let comments = Resource(collection: "comments", path: "/comments", query: ["_page": "1", "_limit": "100"], rows: .rootArray,
                                   id: .field("id"), paging: .linkHeader, pageLoading: .onDemand)

    @Test("Link-header paging over JSONPlaceholder comments: 5 pages of 100 via loadMore, IDs 1–500 once each, then endReached")
    func commentsByLinkHeader() async throws {
        let resource = Self.comments
        try await withServerAndStore { server, store in
            try await store.refresh(resource)
            var pages = 1
            while try store.snapshot("comments").query.hasMore {
                try await store.loadMore(resource)
                pages += 1
            }
            #expect(pages == 5)
            let snapshot = try store.snapshot("comments")
            #expect(snapshot.rows.map(\.id) == (1...500).map(String.init))
            #expect(snapshot.syncMark?.pages.map(\.next) == (2...5).map { server.baseURL.absoluteString + "/comments?_limit=100&_page=\($0)" } + [nil])
            #expect(try await store.loadMore(resource) == .endReached)
            #expect(try await server.requests().map(\.path) == (1...5).map { "/comments?_limit=100&_page=\($0)" })
        }
    }
}
