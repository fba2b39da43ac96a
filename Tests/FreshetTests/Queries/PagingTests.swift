import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Testing
import TestSupport

/// A scripted paged API: page `n` of `count` holds `perPage` rows with IDs counting on from
/// the pages before it, and names page `n + 1` in `next` unless it is the last.
enum PagedFixture {
    static func ids(page n: Int, perPage: Int = 2) -> [String] {
        ((n - 1) * perPage + 1...n * perPage).map(String.init)
    }

    static func body(_ n: Int, of count: Int, ids: [String]? = nil, perPage: Int = 2, v: Int = 1) -> String {
        let next = n < count ? #""https://api.test/p?page=\#(n + 1)""# : "null"
        let rows = (ids ?? Self.ids(page: n, perPage: perPage)).map { #"{"id":"\#($0)","v":\#(v)}"# }.joined(separator: ",")
        return #"{"next":\#(next),"results":[\#(rows)]}"#
    }

    /// `GET /p?page=N`, pages loaded on demand, fresh for 60 s.
    static let resource = Resource.infinite("pages", path: "/p", query: ["page": "1"], rowsAt: "results", id: .field("id"),
                                            freshness: .maxAge(.seconds(60)))

    /// Scripts `count` pages, each answered `200` with an ETag and then `304`s.
    static func script(_ h: ScriptedStore, pages count: Int, perPage: Int = 2) {
        for n in 1...count {
            h.transport.on("/p?page=\(n)", reply: .json(body(n, of: count, perPage: perPage), headers: ["ETag": #""p\#(n)""#]),
                           .status(304, headers: ["ETag": #""p\#(n)""#]))
        }
    }
}

/// Infinite queries (issue 10 item 3): `loadMore`, `hasMore`, per-page revalidation that
/// resumes where it stopped, the first-page reset, rows unique across pages.
@Suite("Paging: loadMore, hasMore, per-page revalidation with resume", .scaledTimeLimit(minutes: 1))
struct PagingTests {
    @Test("a first refresh of an infinite list fetches page 1 only; loadMore appends pages until hasMore is false, then sends nothing")
    func loadMoreToTheEnd() async throws {
        try await withScriptedStore { h in
            PagedFixture.script(h, pages: 3)
            let summary = try await h.store.refresh(PagedFixture.resource)
            #expect(summary == RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 1))
            #expect(try h.store.snapshot("pages").query.hasMore)
            #expect(try await h.store.loadMore(PagedFixture.resource) == .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 2)))
            #expect(try h.store.snapshot("pages").query.hasMore)
            #expect(try await h.store.loadMore(PagedFixture.resource) == .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 3)))
            let snapshot = try h.store.snapshot("pages")
            #expect(snapshot.rows.map(\.id) == (1...6).map(String.init))
            #expect(!snapshot.query.hasMore)
            #expect(snapshot.syncMark?.pages.map(\.url) == (1...3).map { "https://api.test/p?page=\($0)" })
            #expect(snapshot.syncMark?.nextCursor == nil)
            #expect(try await h.store.loadMore(PagedFixture.resource) == .endReached)
            #expect(h.transport.requests.map(\.request.url.query) == ["page=1", "page=2", "page=3"])
        }
    }

    @Test("loadMore on a list never fetched fetches its first page")
    func loadMoreFirst() async throws {
        try await withScriptedStore { h in
            PagedFixture.script(h, pages: 2)
            let result = try await h.store.loadMore(PagedFixture.resource)
            #expect(result == .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 1)))
            let query = try h.store.snapshot("pages").query
            #expect(query.description == "hasRows idle fresh hasMore")
        }
    }

    @Test("concurrent loadMore calls make one request and all get its outcome")
    func concurrentLoadMore() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            h.transport.on("/p?page=1", reply: .json(PagedFixture.body(1, of: 3)))
            h.transport.on("/p?page=2", reply: .held(gate, then: .json(PagedFixture.body(2, of: 3))))
            try await h.store.refresh(PagedFixture.resource)
            let store = h.store
            let calls = (0..<5).map { _ in Task { try await store.loadMore(PagedFixture.resource) } }
            await h.transport.waitForRequests(2)
            await gate.waitUntilReached()
            // Every call must have joined the held request before it ends: a call that starts
            // after it would (rightly) load page 3.
            await SharedRequestTests.waitForWaiters(store, "pages", 5)
            gate.release()
            var outcomes: [LoadMoreResult] = []
            for call in calls { outcomes.append(try await call.value) }
            #expect(outcomes == Array(repeating: .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 2)), count: 5))
            #expect(h.transport.requests.map(\.request.url.query) == ["page=1", "page=2"])
            #expect(try h.store.snapshot("pages").rows.map(\.id) == ["1", "2", "3", "4"])
        }
    }

    @Test("a loadMore asked for while a refresh of the list runs waits for it and then appends after the revalidated pages")
    func loadMoreWaitsForRefresh() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            h.transport.on("/p?page=1", reply: .json(PagedFixture.body(1, of: 3), headers: ["ETag": #""p1""#]),
                           .held(gate, then: .status(304, headers: ["ETag": #""p1""#])))
            h.transport.on("/p?page=2", reply: .json(PagedFixture.body(2, of: 3), headers: ["ETag": #""p2""#]), .status(304))
            h.transport.on("/p?page=3", reply: .json(PagedFixture.body(3, of: 3)))
            try await h.store.refresh(PagedFixture.resource)
            try await h.store.loadMore(PagedFixture.resource)
            let store = h.store
            let refresh = Task { try await store.refresh(PagedFixture.resource) }
            await gate.waitUntilReached()
            let more = Task { try await store.loadMore(PagedFixture.resource) }
            #expect(h.transport.requests.count == 3)
            gate.release()
            #expect(try await refresh.value == RefreshSummary(pages: 2, notModified: 2, rows: 0, lsn: 4))
            #expect(try await more.value == .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 5)))
            #expect(h.transport.requests.map(\.request.url.query) == ["page=1", "page=2", "page=1", "page=2", "page=3"])
            let snapshot = try h.store.snapshot("pages")
            #expect(snapshot.rows.map(\.id) == (1...6).map(String.init))
            #expect(!snapshot.query.hasMore)
        }
    }

    @Test("refresh revalidates only the loaded pages, in order, each with its own If-None-Match; hasMore stays")
    func revalidatesLoadedPages() async throws {
        try await withScriptedStore { h in
            PagedFixture.script(h, pages: 5)
            try await h.store.refresh(PagedFixture.resource)
            try await h.store.loadMore(PagedFixture.resource)
            try await h.store.loadMore(PagedFixture.resource)
            h.transport.removeRequests()
            let summary = try await h.store.refresh(PagedFixture.resource)
            #expect(summary == RefreshSummary(pages: 3, notModified: 3, rows: 0, lsn: 6))
            #expect(h.transport.requests.map(\.request.url.query) == ["page=1", "page=2", "page=3"])
            #expect(h.header("If-None-Match") == [#""p1""#, #""p2""#, #""p3""#])
            let snapshot = try h.store.snapshot("pages")
            #expect(snapshot.rows.map(\.id) == (1...6).map(String.init))
            #expect(snapshot.query.hasMore)
            #expect(snapshot.syncMark?.resumePage == nil)
        }
    }

    @Test("a refresh whose third page fails once sends pages 1, 2, 3, 3 and never emits fewer rows")
    func thirdPageFailsOnce() async throws {
        try await withScriptedStore(.scripted(retry: .init(maxAttempts: 3, baseDelay: .seconds(1), jitter: 0))) { h in
            for n in 1...3 {
                h.transport.on("/p?page=\(n)", reply: .json(PagedFixture.body(n, of: 3), headers: ["ETag": #""p\#(n)""#]),
                               n == 3 ? .status(503) : .status(304), .status(304))
            }
            // .manual: no staleness timer sleeps on the clock, so the one sleeper is the retry's backoff.
            var resource = PagedFixture.resource
            resource.freshness = .manual
            try await h.store.refresh(resource)
            for _ in 1...2 { try await h.store.loadMore(resource) }
            h.transport.removeRequests()
            let observation = recordSnapshots(h.store.observe("pages")) { $0.query.fetch == .idle && $0.lsn == 7 }
            let store = h.store
            let refresh = Task { try await store.refresh(resource) }
            await h.transport.waitForRequests(3)
            await h.clock.waitForSleepers(1)
            #expect(h.clock.nextDeadline == KitClock.Instant(offset: .seconds(1)))
            await h.clock.advance(by: .seconds(1))
            let summary = try await refresh.value
            #expect(summary == RefreshSummary(pages: 3, notModified: 3, rows: 0, lsn: 7))
            #expect(h.transport.requests.map(\.request.url.query) == ["page=1", "page=2", "page=3", "page=3"])
            let seen = try await observation.value
            #expect(seen.allSatisfy { $0.rows.map(\.id) == (1...6).map(String.init) }, "\(seen.map(\.rows.count))")
            #expect(seen.last?.query.error == nil)
            #expect(seen.last?.query.hasMore == false)
        }
    }

    @Test("a revalidation that stops at page 3 resumes there on the next refresh, not at page 1, and keeps every row visible")
    func resumesAtTheFailedPage() async throws {
        try await withScriptedStore(.scripted(retry: .init(maxAttempts: 1, jitter: 0))) { h in
            for n in 1...4 {
                h.transport.on("/p?page=\(n)", reply: .json(PagedFixture.body(n, of: 4), headers: ["ETag": #""p\#(n)""#]),
                               n == 3 ? .status(503) : .status(304), .status(304))
            }
            try await h.store.refresh(PagedFixture.resource)
            for _ in 1...3 { try await h.store.loadMore(PagedFixture.resource) }
            h.transport.removeRequests()
            let error = await expectFetchError { try await h.store.refresh(PagedFixture.resource) }
            #expect(error?.code == .httpStatus)
            #expect(error?.status == 503)
            var snapshot = try h.store.snapshot("pages")
            #expect(snapshot.rows.map(\.id) == (1...8).map(String.init))
            #expect(snapshot.syncMark?.resumePage == 2)
            let summary = try await h.store.refresh(PagedFixture.resource)
            #expect(summary == RefreshSummary(pages: 2, notModified: 2, rows: 0, lsn: 9))
            #expect(h.transport.requests.map(\.request.url.query) == ["page=1", "page=2", "page=3", "page=3", "page=4"])
            #expect(h.header("If-None-Match").suffix(2) == [#""p3""#, #""p4""#])
            snapshot = try h.store.snapshot("pages")
            #expect(snapshot.rows.map(\.id) == (1...8).map(String.init))
            #expect(snapshot.syncMark?.resumePage == nil)
            #expect(snapshot.query.error == nil)
        }
    }

    @Test("the resume point survives a relaunch")
    func resumeSurvivesRelaunch() async throws {
        try await withScriptedStore(.scripted(retry: .init(maxAttempts: 1, jitter: 0))) { h in
            for n in 1...3 {
                h.transport.on("/p?page=\(n)", reply: .json(PagedFixture.body(n, of: 3), headers: ["ETag": #""p\#(n)""#]),
                               n == 2 ? .fail(.cannotConnect) : .status(304), .status(304))
            }
            try await h.store.refresh(PagedFixture.resource)
            for _ in 1...2 { try await h.store.loadMore(PagedFixture.resource) }
            _ = await expectFetchError { try await h.store.refresh(PagedFixture.resource) }
            try h.reopen()
            #expect(try h.store.snapshot("pages").syncMark?.resumePage == 1)
            h.transport.removeRequests()
            try await h.store.refresh(PagedFixture.resource)
            #expect(h.transport.requests.map(\.request.url.query) == ["page=2", "page=3"])
            #expect(try h.store.verify().problems.isEmpty)
        }
    }

    @Test("refresh(mode: .firstPage) drops the later pages and fetches page 1 unconditionally")
    func firstPageReset() async throws {
        try await withScriptedStore { h in
            for n in 1...3 {
                h.transport.on("/p?page=\(n)", reply: .json(PagedFixture.body(n, of: 3), headers: ["ETag": #""p\#(n)""#]))
            }
            try await h.store.refresh(PagedFixture.resource)
            for _ in 1...2 { try await h.store.loadMore(PagedFixture.resource) }
            h.transport.removeRequests()
            let summary = try await h.store.refresh(PagedFixture.resource, mode: .firstPage)
            #expect(summary == RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 4))
            #expect(h.header("If-None-Match") == [nil])
            let snapshot = try h.store.snapshot("pages")
            #expect(snapshot.rows.map(\.id) == ["1", "2"])
            #expect(snapshot.syncMark?.pages.count == 1)
            #expect(snapshot.query.hasMore)
            #expect(try await h.store.loadMore(PagedFixture.resource) == .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 5)))
        }
    }

    @Test("a row that moved to a later page appears once, at the position the server gave last")
    func rowMovedToLaterPage() async throws {
        try await withScriptedStore { h in
            // Page 2 is fetched after a row was inserted at the top: "2" shifted onto it.
            h.transport.on("/p?page=1", reply: .json(PagedFixture.body(1, of: 3, ids: ["1", "2"])))
            h.transport.on("/p?page=2", reply: .json(PagedFixture.body(2, of: 3, ids: ["2", "3"])))
            try await h.store.refresh(PagedFixture.resource)
            try await h.store.loadMore(PagedFixture.resource)
            #expect(try h.store.snapshot("pages").rows.map(\.id) == ["1", "2", "3"])
            #expect(try h.store.snapshot("pages").rows.count == 3)
        }
    }

    @Test("a whole-list resource still walks every page in refresh")
    func wholeListWalksAll() async throws {
        try await withScriptedStore { h in
            PagedFixture.script(h, pages: 3)
            var whole = PagedFixture.resource
            whole.pageLoading = .all
            try await h.store.refresh(whole)
            #expect(try h.store.snapshot("pages").rows.count == 6)
            #expect(try !h.store.snapshot("pages").query.hasMore)
            #expect(try await h.store.loadMore(whole) == .endReached)
        }
    }

    @Test("an 8-page revalidation of an infinite list answered by 304s emits no more than two snapshots")
    func eightPagesOf304() async throws {
        try await withScriptedStore { h in
            PagedFixture.script(h, pages: 9)
            try await h.store.refresh(PagedFixture.resource)
            for _ in 1...7 { try await h.store.loadMore(PagedFixture.resource) }
            await h.clock.advance(by: .seconds(61))
            let (count, seen) = try await EmissionTests.emissions(h, "pages") { try await h.store.refresh(PagedFixture.resource) }
            #expect((1...2).contains(count), "\(count) emissions; seen \(seen.map { "LSN \($0.lsn.rawValue) \($0.query)" })")
            #expect(h.header("If-None-Match").suffix(8) == (1...8).map { #""p\#($0)""# })
            #expect(seen.last?.rows.map(\.id) == (1...16).map(String.init))
            #expect(seen.last?.query.hasMore == true)
        }
    }
}
