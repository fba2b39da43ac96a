import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Synchronization
import Testing
import TestSupport

/// An `HTTPTransport` that sends through another one and records each exchange.
final class RecordingTransport: HTTPTransport {
    struct Exchange: Sendable {
        var request: HTTPRequest
        var status: Int?
        var headers: HTTPHeaders?
    }

    private let base: any HTTPTransport
    private let log = Mutex<[Exchange]>([])

    init(_ base: any HTTPTransport) { self.base = base }

    var exchanges: [Exchange] { log.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        do {
            let response = try await base.send(request)
            log.withLock { $0.append(Exchange(request: request, status: response.status, headers: response.headers)) }
            return response
        } catch {
            log.withLock { $0.append(Exchange(request: request, status: nil, headers: nil)) }
            throw error
        }
    }
}

@Suite("Revalidation against nginx", .scaledTimeLimit(minutes: 2))
struct NginxRevalidationTests {
    /// The served files: two PokeAPI details under the API path, one without ETags.
    static func files() throws -> [String: Data] {
        let pikachu = try decompressedFixture("pokeapi/api/v2/pokemon/25.json.gz")
        let bulbasaur = try decompressedFixture("pokeapi/api/v2/pokemon/1.json.gz")
        return [
            "api/v2/pokemon/25.json": pikachu,
            "api/v2/pokemon/1.json": bulbasaur,
            "noetag/25.json": pikachu,
        ]
    }

    /// Runs `body` with nginx and a store that fetches from it over URLSessionTransport, its
    /// times from a test clock.
    static func withNginxStore<R>(_ body: (NginxServer, Store, RecordingTransport) async throws -> R) async throws -> R {
        try await NginxServer.withRunning(files: try files()) { server in
            var configuration = Configuration(durability: .none, baseURL: server.baseURL)
            configuration.defaultFreshness = .always
            configuration.retry = .init(maxAttempts: 1)
            let clock = KitClock()
            let transport = RecordingTransport(URLSessionTransport())
            let dependencies = Dependencies(now: clock.dateSource, clock: clock, random: SeededRandom.source(seed: 0), transport: transport)
            return try await withTemporaryStore(configuration: configuration, dependencies: dependencies) { store in
                try await body(server, store, transport)
            }
        }
    }

    @Test("a document: 200 with nginx's strong ETag, then If-None-Match → 304 → notModified, rows kept")
    func etagRevalidation() async throws {
        try await Self.withNginxStore { server, store, transport in
            let resource = Resource.document("pokemon-detail", path: "/api/v2/pokemon/25.json", freshness: .always)
            let first = try await store.refresh(resource)
            #expect(first == RefreshSummary(pages: 1, notModified: 0, rows: 1, lsn: 1))
            let before = try store.snapshot("pokemon-detail")
            #expect(before.rows.map(\.id) == ["25"])
            #expect(try before.rows[0].decode(PokemonDetail.self).name == "pikachu")

            let mark = try #require(before.syncMark)
            let etag = try #require(mark.etag)
            // nginx's form: a quoted strong tag, "<mtime hex>-<size hex>", not W/"…".
            #expect(etag.wholeMatch(of: /"[0-9a-f]+-[0-9a-f]+"/) != nil, "ETag \(etag)")
            #expect(etag == (try server.expectedETag(of: "api/v2/pokemon/25.json")))
            #expect(mark.lastModified == (try server.expectedLastModified(of: "api/v2/pokemon/25.json")))
            #expect(transport.exchanges.first?.headers?["ETag"] == etag)

            let summary = try #require(try await store.refreshIfNeeded(resource))
            #expect(summary == RefreshSummary(pages: 1, notModified: 1, rows: 0, lsn: 2))
            let exchanges = transport.exchanges
            #expect(exchanges.count == 2)
            #expect(exchanges.map(\.status) == [200, 304])
            #expect(exchanges[0].request.headers["If-None-Match"] == nil)
            #expect(exchanges[1].request.headers["If-None-Match"] == etag)
            #expect(exchanges[1].request.headers["If-Modified-Since"] == mark.lastModified)

            let records = try store.allRecords()
            #expect(records.map(\.kind) == [.fetched, .notModified])
            #expect(records.last?.notModified?.response.status == 304)
            #expect(records.last?.notModified?.response.etag == etag)
            let after = try store.snapshot("pokemon-detail")
            #expect(after.rows == before.rows)
            #expect(after.syncMark?.etag == etag)
            #expect(after.syncMark?.rowsLSN == 1)
        }
    }

    @Test("without ETags (etag off) only Last-Modified validates: If-Modified-Since → 304")
    func lastModifiedRevalidation() async throws {
        try await Self.withNginxStore { server, store, transport in
            let resource = Resource.document("noetag", path: "/noetag/25.json", freshness: .always)
            try await store.refresh(resource)
            let mark = try #require(try store.snapshot("noetag").syncMark)
            #expect(mark.etag == nil)
            let lastModified = try #require(mark.lastModified)
            #expect(lastModified == (try server.expectedLastModified(of: "noetag/25.json")))

            let summary = try await store.refresh(resource)
            #expect(summary.notModified == 1)
            let exchanges = transport.exchanges
            #expect(exchanges.map(\.status) == [200, 304])
            #expect(exchanges[1].request.headers["If-None-Match"] == nil)
            #expect(exchanges[1].request.headers["If-Modified-Since"] == lastModified)
            #expect(try store.allRecords().map(\.kind) == [.fetched, .notModified])
            #expect(try store.snapshot("noetag").rows.map(\.id) == ["25"])
        }
    }

    @Test("a changed file answers the conditional request with 200 and its new ETag")
    func changedFile() async throws {
        try await Self.withNginxStore { server, store, transport in
            let resource = Resource.document("pokemon-detail", path: "/api/v2/pokemon/1.json", freshness: .always)
            try await store.refresh(resource)
            let oldETag = try #require(try store.snapshot("pokemon-detail").syncMark?.etag)

            let changed = Data(#"{"id":1,"name":"bulbasaur","types":[]}"#.utf8)
            try server.rewrite("api/v2/pokemon/1.json", changed, laterBy: 10)
            let newETag = try server.expectedETag(of: "api/v2/pokemon/1.json")
            #expect(newETag != oldETag)

            let summary = try await store.refresh(resource)
            #expect(summary == RefreshSummary(pages: 1, notModified: 0, rows: 1, lsn: 2))
            #expect(transport.exchanges.map(\.status) == [200, 200])
            #expect(transport.exchanges[1].request.headers["If-None-Match"] == oldETag)
            let snapshot = try store.snapshot("pokemon-detail")
            #expect(snapshot.syncMark?.etag == newETag)
            #expect(snapshot.rows.map { String(decoding: $0.json, as: UTF8.self) } == [#"{"id":1,"name":"bulbasaur","types":[]}"#])

            // And the next revalidation uses the new tag.
            try await store.refresh(resource)
            #expect(transport.exchanges.map(\.status) == [200, 200, 304])
            #expect(transport.exchanges[2].request.headers["If-None-Match"] == newETag)
        }
    }
}
