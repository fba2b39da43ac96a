import Foundation
import FreshetHTTP
import Synchronization
import Testing
@testable import Freshet

/// A row of the PokeAPI list.
struct PokemonEntry: Decodable, Equatable {
    let name: String
    let url: String
}

/// The part of a PokeAPI detail document these tests read.
struct PokemonDetail: Decodable {
    struct Slot: Decodable {
        struct Named: Decodable { let name: String }
        let type: Named
    }
    let id: Int
    let name: String
    let types: [Slot]
}

let pokemonList = Resource.list("pokemon", path: "/api/v2/pokemon/", query: ["limit": "20"])

/// The request targets of a full sync of `pokemonList` (151 pokemon, 20 a page).
let pokemonListTargets = ["/api/v2/pokemon/?limit=20"] + (1...7).map { "/api/v2/pokemon/?offset=\($0 * 20)&limit=20" }

/// Runs `body` with a fixture server and a store that fetches from it with the live transport.
func withServerAndStore<R>(
    configure: (inout Configuration) -> Void = { _ in },
    sleeps clock: InstantSleepClock = InstantSleepClock(),
    now: @escaping @Sendable () -> Date = TestClock.fixed,
    _ body: (FixtureServer, Store) async throws -> R
) async throws -> R {
    try await FixtureServer.withRunning { server in
        var configuration = Configuration.test(baseURL: server.baseURL)
        configure(&configuration)
        let dependencies = Dependencies.test(transport: URLSessionTransport(), now: now, sleeps: clock)
        return try await withTemporaryStore(configuration: configuration, dependencies: dependencies) { store in
            try await body(server, store)
        }
    }
}

@Suite("Refresh against the fixture server")
struct FixtureServerRefreshTests {
    @Test("a paged sync of /api/v2/pokemon/ stores all 151 pokemon in server order")
    func pagedSync() async throws {
        try await withServerAndStore { server, store in
            let summary = try await store.refresh(pokemonList)
            #expect(summary == RefreshSummary(pages: 8, notModified: 0, rows: 151, lsn: 8))

            let snapshot = try store.snapshot("pokemon")
            #expect(snapshot.rows.count == 151)
            #expect(snapshot.rows.map(\.id) == (1...151).map(String.init))
            #expect(try snapshot.rows[24].decode(PokemonEntry.self) == PokemonEntry(name: "pikachu", url: "/api/v2/pokemon/25/"))
            #expect(try snapshot.rows[0].decode(PokemonEntry.self).name == "bulbasaur")
            #expect(try snapshot.rows[150].decode(PokemonEntry.self).name == "mew")
            // Rows are the server's objects with sorted keys and unescaped slashes.
            #expect(String(decoding: snapshot.rows[0].json, as: UTF8.self) == #"{"name":"bulbasaur","url":"/api/v2/pokemon/1/"}"#)
            #expect(snapshot.lsn == 8)
            #expect(snapshot.status == .fresh)

            let mark = try #require(snapshot.syncMark)
            #expect(mark.pageCount == 8)
            let etag = try #require(mark.etag)
            #expect(etag.wholeMatch(of: /"[0-9a-f]{32}"/) != nil)
            #expect(mark.cacheControl == "max-age=60")
            #expect(mark.lastModified != nil)
            #expect(mark.nextCursor == nil)
            #expect(mark.fetchedLSN == 8)
            #expect(mark.fetchedAt == TestClock.now)
            #expect(mark.consecutiveFailures == 0)
            let base = server.baseURL.absoluteString
            #expect(mark.pages.map(\.url) == pokemonListTargets.map { base + $0 })
            #expect(mark.pages.map(\.next) == pokemonListTargets.dropFirst().map { base + $0 } + [nil])
            #expect(mark.pages.allSatisfy { $0.etag?.wholeMatch(of: /"[0-9a-f]{32}"/) != nil })
            #expect(mark.pages.last?.etag == etag)

            let requests = try await server.requests()
            #expect(requests.count == 8)
            #expect(requests.map(\.method) == Array(repeating: "GET", count: 8))
            #expect(requests.map(\.path) == pokemonListTargets)
            #expect(requests.map(\.status) == Array(repeating: 200, count: 8))
            #expect(requests.allSatisfy { $0.if_none_match == nil && $0.if_modified_since == nil })

            let records = try store.allRecords()
            #expect(records.map(\.lsn) == (1...8).map { LSN($0) })
            for (i, record) in records.enumerated() {
                guard case .fetched(let fetched) = record.event else {
                    Issue.record("record \(record.lsn) is \(record.kind), not fetched")
                    continue
                }
                #expect(fetched.placement == .page(index: i, isLast: i == 7))
                #expect(fetched.rows.map(\.id) == (i * 20 + 1 ... min(i * 20 + 20, 151)).map(String.init))
                #expect(fetched.response.url == base + pokemonListTargets[i])
                #expect(fetched.response.status == 200)
                #expect(fetched.nextCursor == (i < 7 ? base + pokemonListTargets[i + 1] : nil))
            }
        }
    }

    @Test("a detail refresh upserts one row with the document's id")
    func detailRefresh() async throws {
        try await withServerAndStore { server, store in
            let summary = try await store.refresh(.document("pokemon-detail", path: "/api/v2/pokemon/25/"))
            #expect(summary.pages == 1)
            #expect(summary.rows == 1)
            let snapshot = try store.snapshot("pokemon-detail")
            #expect(snapshot.rows.map(\.id) == ["25"])
            let detail = try snapshot.rows[0].decode(PokemonDetail.self)
            #expect(detail.id == 25)
            #expect(detail.name == "pikachu")
            #expect(detail.types.map(\.type.name) == ["electric"])

            try await store.refresh(.document("pokemon-detail", path: "/api/v2/pokemon/1/"))
            try await store.refresh(.document("pokemon-detail", path: "/api/v2/pokemon/25/"))
            #expect(try store.ids("pokemon-detail") == ["25", "1"])
            #expect(try await server.requests().map(\.path) == ["/api/v2/pokemon/25/", "/api/v2/pokemon/1/", "/api/v2/pokemon/25/"])
        }
    }

    @Test("a second refresh revalidates page by page with If-None-Match: eight 304s, rows kept")
    func revalidation() async throws {
        try await withServerAndStore { server, store in
            try await store.refresh(pokemonList)
            let before = try store.snapshot("pokemon")
            let summary = try await store.refresh(pokemonList)
            #expect(summary == RefreshSummary(pages: 8, notModified: 8, rows: 0, lsn: 16))

            let requests = try await server.requests()
            #expect(requests.count == 16)
            let second = Array(requests.dropFirst(8))
            #expect(second.map(\.path) == pokemonListTargets)
            #expect(second.map(\.status) == Array(repeating: 304, count: 8))
            #expect(second.map(\.if_none_match) == before.syncMark?.pages.map(\.etag))

            let records = try store.allRecords()
            #expect(records.dropFirst(8).map(\.kind) == Array(repeating: .notModified, count: 8))
            for (i, record) in records.dropFirst(8).enumerated() {
                guard case .notModified(let n) = record.event else { continue }
                #expect(n.page == i)
                #expect(n.response.status == 304)
            }
            let after = try store.snapshot("pokemon")
            #expect(after.rows == before.rows)
            #expect(after.syncMark?.rowsLSN == 8)
            #expect(after.syncMark?.fetchedLSN == 8)
            #expect(after.lsn == 16)
            #expect(after.status == .fresh)
        }
    }

    /// RFC 9111 §4.2.3: the age starts at the response delay — the wall time the request took,
    /// recorded in the SyncMark — so the rows are fresh for max-age minus that delay. The
    /// clock is moved to one second before or after that edge, which holds however slow the
    /// request was (over a second per page under ThreadSanitizer).
    @Test("under the .http policy the rows are fresh for the server's max-age=60, less the response delay", arguments: [(-1.0, true), (1.0, false)])
    func httpFreshness(offset: Double, fresh: Bool) async throws {
        let clock = ManualClock()
        try await withServerAndStore(configure: { $0.defaultFreshness = .http }, now: clock.now) { server, store in
            try await store.refresh(pokemonList)
            #expect(try store.snapshot("pokemon").status == .fresh)
            let mark = try #require(try store.snapshot("pokemon").syncMark)
            clock.advance(bySeconds: 60 - Double(mark.responseDelayMicros) / 1_000_000 + offset)
            #expect(try store.snapshot("pokemon").status == (fresh ? .fresh : .stale))
            #expect(try await store.refreshIfNeeded(pokemonList) == (fresh ? nil : RefreshSummary(pages: 8, notModified: 8, rows: 0, lsn: 16)))
            #expect(try await server.requests().count == (fresh ? 8 : 16))
        }
    }

    @Test("a second sync replaces the pages in place: still 151 rows, no duplicates")
    func resync() async throws {
        try await withServerAndStore { server, store in
            try await store.refresh(pokemonList)
            let summary = try await store.refresh(.list("pokemon", path: "/api/v2/pokemon/", query: ["limit": "50"]))
            #expect(summary == RefreshSummary(pages: 4, notModified: 0, rows: 151, lsn: 12))
            let snapshot = try store.snapshot("pokemon")
            #expect(snapshot.rows.map(\.id) == (1...151).map(String.init))
            #expect(snapshot.syncMark?.pageCount == 4)
            #expect(try await server.requests().count == 12)
        }
    }

    @Test("a refresh that needs more pages than maxPages keeps maxPages pages and stops with tooManyPages")
    func maxPages() async throws {
        try await withServerAndStore(configure: { $0.maxPages = 3 }) { server, store in
            let error = await #expect(throws: FetchError.self) { try await store.refresh(pokemonList) }
            #expect(error?.code == .tooManyPages)
            #expect(error?.message.hasPrefix("paging of pokemon stopped at Configuration.maxPages (3) pages: page 4 (http://127.0.0.1:") == true)
            #expect(error?.message.hasSuffix("/api/v2/pokemon/?offset=60&limit=20) is not fetched") == true)
            #expect(error?.lsn == 4)
            #expect(try await server.requests().map(\.path) == Array(pokemonListTargets.prefix(3)))
            let records = try store.allRecords()
            #expect(records.map(\.kind) == [.fetched, .fetched, .fetched, .fetchFailed])
            guard case .fetchFailed(let failed) = records.last?.event else { return }
            #expect(failed.reason == "tooManyPages")
            #expect(failed.page == 2)
            #expect(try store.ids("pokemon") == (1...60).map(String.init))
        }
    }

    @Test("a 500 is retried after the backoff delay, and the retry's answer is folded")
    func retryAfterServerError() async throws {
        let clock = InstantSleepClock()
        try await withServerAndStore(sleeps: clock) { server, store in
            try await store.refresh(pokemonList)
            try await server.control(["fail_status": 500, "fail_count": 1])
            let summary = try await store.refresh(pokemonList)
            #expect(summary == RefreshSummary(pages: 8, notModified: 8, rows: 0, lsn: 17))
            #expect(clock.sleeps == [.seconds(1)])
            let records = try store.allRecords()
            guard case .fetchFailed(let failed) = records[8].event else {
                Issue.record("record 9 is \(records[8].kind)")
                return
            }
            #expect(failed.status == 500)
            #expect(failed.attempt == 1)
            #expect(records.dropFirst(9).map(\.kind) == Array(repeating: .notModified, count: 8))
            #expect(try await server.requests().dropFirst(8).map(\.status) == [500] + Array(repeating: 304, count: 8))
            let snapshot = try store.snapshot("pokemon")
            #expect(snapshot.rows.count == 151)
            #expect(snapshot.status == .fresh)
            #expect(snapshot.syncMark?.consecutiveFailures == 0)
        }
    }
}

@Suite("Offline after a relaunch")
struct OfflineTests {
    enum Outage: String, CaseIterable, Sendable {
        case refusing
        case stopped
    }

    @Test("after a sync, a relaunch without the server shows the stored rows and a refresh fails with cannotConnect",
          arguments: Outage.allCases)
    func offlineAfterReopen(outage: Outage) async throws {
        try await FixtureServer.withRunning { server in
            try await withTemporaryDirectory { directory in
                let configuration = Configuration.test(baseURL: server.baseURL)
                let online = try Store(directory: directory, configuration: configuration, dependencies: .test(transport: URLSessionTransport()))
                try await online.refresh(pokemonList)
                online.close()

                switch outage {
                case .refusing: try await server.control(["refuse": true])
                case .stopped: await server.stop()
                }

                let clock = InstantSleepClock()
                let offline = try Store(directory: directory, configuration: configuration, dependencies: .test(transport: URLSessionTransport(), sleeps: clock))
                defer { offline.close() }
                var iterator = offline.observe("pokemon").makeAsyncIterator()
                let first = try #require(try await iterator.next())
                #expect(first.rows.count == 151)
                #expect(first.rows.map(\.id) == (1...151).map(String.init))
                #expect(first.lsn == 8)
                #expect(first.status == .fresh)

                // One attempt: offline pauses instead of backing off (docs/queries.md).
                let error = await #expect(throws: FetchError.self) { try await offline.refresh(pokemonList) }
                #expect(error?.code == .cannotConnect)
                #expect(error?.status == nil)
                #expect(error?.lsn == 9)
                #expect(error?.url == server.baseURL.absoluteString + "/api/v2/pokemon/?limit=20")
                // No retry backoff; the clock's only sleeps are the staleness timer's (max-age 300).
                #expect(clock.sleeps.allSatisfy { $0 == .seconds(300) }, "\(clock.sleeps)")

                let records = try offline.allRecords()
                #expect(records.map(\.lsn) == (1...9).map { LSN($0) })
                let failures = records.dropFirst(8).compactMap { record -> Event.FetchFailed? in
                    guard case .fetchFailed(let failed) = record.event else { return nil }
                    return failed
                }
                #expect(failures.map(\.attempt) == [1])
                #expect(failures.map(\.reason) == ["cannotConnect"])
                #expect(failures.map(\.status) == [nil])
                #expect(failures.map(\.url) == [server.baseURL.absoluteString + "/api/v2/pokemon/?limit=20"])

                let snapshot = try offline.snapshot("pokemon")
                #expect(snapshot.rows.count == 151)
                #expect(snapshot.rows == first.rows)
                // Offline is paused, not failed: the summary follows the query state.
                #expect(snapshot.status == .fresh)
                #expect(snapshot.query.error == nil)
                #expect(snapshot.syncMark?.consecutiveFailures == 1)
                #expect(snapshot.query.fetch == .paused)
                #expect(snapshot.query.error == nil)
                #expect(snapshot.query.data == .hasRows)
                #expect(snapshot.syncMark?.fetchedLSN == 8)

                // The observer follows: its values end with the failed status and the same rows.
                var seen = first
                while seen.lsn != 9 || seen.status != snapshot.status {
                    seen = try #require(try await iterator.next())
                    #expect(seen.rows.count == 151)
                }
            }
        }
    }
}

@Suite("Refresh failures")
struct RefreshFailureTests {
    enum ServerFault: String, CaseIterable, Sendable {
        case malformedBody
        case internalServerError

        var control: [String: Any] {
            switch self {
            case .malformedBody: ["malformed": true]
            case .internalServerError: ["fail_status": 500, "fail_count": 1]
            }
        }

        var code: FetchError.Code {
            switch self {
            case .malformedBody: .malformedBody
            case .internalServerError: .httpStatus
            }
        }

        var status: Int { self == .malformedBody ? 200 : 500 }
    }

    @Test("a server fault fails the refresh, records fetchFailed and keeps the previous rows", arguments: ServerFault.allCases)
    func serverFault(fault: ServerFault) async throws {
        try await withServerAndStore(configure: { $0.retry = .init(maxAttempts: 1) }) { server, store in
            try await store.refresh(pokemonList)
            let before = try store.snapshot("pokemon")
            try await server.control(fault.control)

            let error = await #expect(throws: FetchError.self) { try await store.refresh(pokemonList) }
            #expect(error?.code == fault.code)
            #expect(error?.status == fault.status)
            #expect(error?.lsn == 9)

            let after = try store.snapshot("pokemon")
            #expect(after.rows == before.rows)
            #expect(after.syncMark?.etag == before.syncMark?.etag)
            #expect(after.syncMark?.fetchedLSN == 8)
            #expect(after.syncMark?.lastError?.reason == fault.code.rawValue)
            #expect(after.syncMark?.lastError?.status == fault.status)
            #expect(after.syncMark?.consecutiveFailures == 1)

            let records = try store.allRecords()
            #expect(records.count == 9)
            let last = try #require(records.last)
            guard case .fetchFailed(let failed) = last.event else {
                Issue.record("the last record is \(last.kind), not fetchFailed")
                return
            }
            #expect(failed.reason == fault.code.rawValue)
            #expect(failed.status == fault.status)
            #expect(failed.url == server.baseURL.absoluteString + "/api/v2/pokemon/?limit=20")
            #expect(failed.attempt == 1)
            #expect(try await server.requests().last?.status == fault.status)

            // Once the fault is gone, a refresh succeeds and clears the failure.
            try await server.control(["reset": true])
            try await store.refresh(pokemonList)
            let recovered = try store.snapshot("pokemon")
            #expect(recovered.rows == before.rows)
            #expect(recovered.status == .fresh)
            #expect(recovered.syncMark?.consecutiveFailures == 0)
            #expect(recovered.lsn == 17)
        }
    }

    struct StubCase: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var transport: @Sendable () -> StubTransport
        var code: FetchError.Code
        var status: Int?
        /// Whether the default retry policy tries again (three attempts in all).
        var retried = false
    }

    static let stubCases: [StubCase] = [
        StubCase(testDescription: "a body that is not JSON", transport: { .answering("this is not json") }, code: .malformedBody, status: 200),
        StubCase(testDescription: "JSON without the results array", transport: { .answering(#"{"count":1}"#) }, code: .malformedBody, status: 200),
        StubCase(testDescription: "a row without an id", transport: { .answering(#"{"results":[{"id":1},{"name":"x"}]}"#) }, code: .malformedBody, status: 200),
        StubCase(testDescription: "an HTML content type", transport: { .answering(#"{"results":[]}"#, headers: ["Content-Type": "text/html; charset=utf-8"]) }, code: .malformedBody, status: 200),
        StubCase(testDescription: "a 404", transport: { .answering(#"{"detail":"Not found."}"#, status: 404) }, code: .httpStatus, status: 404),
        StubCase(testDescription: "a 503", transport: { .answering("", status: 503) }, code: .httpStatus, status: 503, retried: true),
        StubCase(testDescription: "a timeout", transport: { .failing(.timedOut) }, code: .timedOut, status: nil, retried: true),
        // Offline pauses instead of backing off (docs/queries.md): one attempt.
        StubCase(testDescription: "a refused connection", transport: { .failing(.cannotConnect) }, code: .cannotConnect, status: nil),
        StubCase(testDescription: "a dropped connection", transport: { .failing(.connectionLost) }, code: .connectionLost, status: nil, retried: true),
        StubCase(testDescription: "a bad response", transport: { .failing(.badResponse) }, code: .transport, status: nil),
    ]

    @Test("a failed refresh throws the matching FetchError, appends fetchFailed per attempt and keeps the rows", arguments: stubCases)
    func stubbedFailure(stub: StubCase) async throws {
        let transport = stub.transport()
        let clock = InstantSleepClock()
        try await withTemporaryStore(dependencies: .test(transport: transport, sleeps: clock)) { store in
            try await store.append(replace(rows("1", "2")), to: "items")
            let resource = Resource.list("items", path: "/items", id: .field("id"), paging: .none)
            let attempts = stub.retried ? 3 : 1
            let lastLSN = LSN(UInt64(1 + attempts))
            let error = await #expect(throws: FetchError.self) { try await store.refresh(resource) }
            #expect(error?.code == stub.code)
            #expect(error?.status == stub.status)
            #expect(error?.url == "http://stub.invalid/items")
            #expect(error?.lsn == lastLSN)
            #expect(transport.requests.map(\.url.absoluteString) == Array(repeating: "http://stub.invalid/items", count: attempts))
            #expect(clock.sleeps == (stub.retried ? [.seconds(1), .seconds(2)] : []))

            let snapshot = try store.snapshot("items")
            #expect(snapshot.rows == rows("1", "2"))
            let records = try store.allRecords()
            #expect(records.map(\.kind) == [.fetched] + Array(repeating: .fetchFailed, count: attempts))
            let failures = records.compactMap { record -> Event.FetchFailed? in
                guard case .fetchFailed(let failed) = record.event else { return nil }
                return failed
            }
            #expect(failures.map(\.attempt) == Array(1...attempts))
            #expect(failures.allSatisfy { $0.reason == stub.code.rawValue && $0.status == stub.status })
            let message = failures.last?.message ?? ""
            #expect(message == error?.message)
            #expect(snapshot.syncMark?.consecutiveFailures == attempts)
            // A refused connection pauses (no error): the summary is the freshness, never failed.
            let failed = Snapshot.Status.failed(error: .init(reason: stub.code.rawValue, status: stub.status, message: message, lsn: lastLSN), lastSyncedAt: TestClock.now)
            #expect(snapshot.status == (stub.code.rawValue == "cannotConnect" ? .fresh : failed))
        }
    }

    @Test("a 429 waits for its Retry-After, then the retry succeeds")
    func retryAfterHeader() async throws {
        let calls = Mutex(0)
        let transport = StubTransport { request in
            let n = calls.withLock { $0 += 1; return $0 }
            if n == 1 {
                return HTTPResponse(status: 429, headers: ["Retry-After": "7", "Content-Type": "application/json"], body: Data("{}".utf8), url: request.url)
            }
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(#"{"results":[{"id":"a"}]}"#.utf8), url: request.url)
        }
        let clock = InstantSleepClock()
        try await withTemporaryStore(dependencies: .test(transport: transport, sleeps: clock)) { store in
            let summary = try await store.refresh(.list("items", path: "/items", id: .field("id"), paging: .none))
            #expect(summary == RefreshSummary(pages: 1, notModified: 0, rows: 1, lsn: 2))
            #expect(clock.sleeps == [.seconds(7)])
            #expect(try store.allRecords().map(\.kind) == [.fetchFailed, .fetched])
            #expect(try store.ids("items") == ["a"])
            #expect(try store.snapshot("items").status == .fresh)
        }
    }

    @Test("a cancelled transport appends nothing")
    func cancelledAppendsNothing() async throws {
        try await withTemporaryStore(dependencies: .test(transport: StubTransport.failing(.cancelled))) { store in
            let error = await #expect(throws: FetchError.self) {
                try await store.refresh(.list("items", path: "/items", id: .field("id"), paging: .none))
            }
            #expect(error?.code == .cancelled)
            #expect(error?.lsn == nil)
            #expect(store.lastLSN == .zero)
        }
    }

    @Test("a next link that points back at a fetched page stops with pagingLoop")
    func pagingLoop() async throws {
        let transport = StubTransport { request in
            let body = #"{"next":"http://stub.invalid/items?page=1","results":[{"id":1}]}"#
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(body.utf8), url: request.url)
        }
        try await withTemporaryStore(dependencies: .test(transport: transport)) { store in
            let error = await #expect(throws: FetchError.self) {
                try await store.refresh(.list("items", path: "/items", id: .field("id")))
            }
            #expect(error?.code == .pagingLoop)
            #expect(transport.requests.map(\.url.absoluteString) == ["http://stub.invalid/items", "http://stub.invalid/items?page=1"])
            let records = try store.allRecords()
            #expect(records.map(\.kind) == [.fetched, .fetched, .fetchFailed])
            #expect(error?.lsn == 3)
        }
    }

    @Test("a next link that is not a URL stops paging with malformedBody; the stored later pages stay")
    func unparseableNextLink() async throws {
        let broken = Mutex(false)
        let transport = StubTransport { request in
            let page = request.url.query == "page=2" ? 2 : 1
            let next = page == 1 ? (broken.withLock { $0 } ? #""http://[::1""# : #""http://stub.invalid/items?page=2""#) : "null"
            let body = #"{"next":\#(next),"results":[{"id":\#(page)}]}"#
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(body.utf8), url: request.url)
        }
        try await withTemporaryStore(dependencies: .test(transport: transport)) { store in
            let items = Resource.list("items", path: "/items", id: .field("id"))
            try await store.refresh(items)
            #expect(try store.ids("items") == ["1", "2"])
            broken.withLock { $0 = true }
            let error = await #expect(throws: FetchError.self) { try await store.refresh(items) }
            #expect(error?.code == .malformedBody)
            #expect(error?.message == "paging of items stopped at page 1: its next link (11 bytes) is not a URL")
            #expect(try store.allRecords().map(\.kind) == [.fetched, .fetched, .fetchFailed])
            #expect(try store.ids("items") == ["1", "2"])
        }
    }

    @Test("a path without a base URL fails with invalidURL and appends nothing")
    func invalidURL() async throws {
        try await withTemporaryStore(configuration: .test(baseURL: nil)) { store in
            let error = await #expect(throws: FetchError.self) { try await store.refresh(pokemonList) }
            #expect(error?.code == .invalidURL)
            #expect(store.lastLSN == .zero)
        }
    }
}
