import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Testing
import TestSupport

/// Emissions that mean something (issue 10 item 6) and forced reload (item 7).
@Suite("Emissions: only transitions a view cares about; forced reload", .scaledTimeLimit(minutes: 1))
struct EmissionTests {
    /// Page `n` of `count` of collection `pages`: one row `n`, and a `next` URL unless last.
    static func page(_ n: Int, of count: Int) -> String {
        let next = n < count ? #""https://api.test/p?page=\#(n + 1)""# : "null"
        return #"{"next":\#(next),"results":[{"id":"\#(n)","v":1}]}"#
    }

    static let pages = Resource.list("pages", path: "/p", query: ["page": "1"], rowsAt: "results", id: .field("id"),
                                     paging: .nextField("next"), freshness: .maxAge(.seconds(60)))

    /// Observes `collection` by name, reads the first emission, runs `body`, reads up to the
    /// first idle non-stale emission; returns how many snapshots the hub sent after the first
    /// and what the observer read. The hub reads the state when it delivers, so a fetch that
    /// ends before its start is delivered shows as one emission: the count is 1 or 2.
    static func emissions(_ h: ScriptedStore, _ collection: String, during body: () async throws -> Void) async throws -> (count: Int, seen: [Snapshot]) {
        var observer = h.store.observe(collection).makeAsyncIterator()
        let first = try #require(try await observer.next())
        let before = h.store.hub.emissionCount()
        try await body()
        let seen = try await collectSnapshots(&observer) { $0.query.fetch == .idle && !$0.query.isStale }
        return (h.store.hub.emissionCount() - before, [first] + seen)
    }

    @Test("an 8-page revalidation answered by 304s emits two snapshots: fetching, then fresh")
    func eightPagesOf304() async throws {
        try await withScriptedStore { h in
            for n in 1...8 {
                h.transport.on("/p?page=\(n)", reply: .json(Self.page(n, of: 8), headers: ["ETag": #""p\#(n)""#]), .status(304, headers: ["ETag": #""p\#(n)""#]))
            }
            try await h.store.refresh(Self.pages)
            await h.clock.advance(by: .seconds(61))
            let (count, seen) = try await Self.emissions(h, "pages") { try await h.store.refresh(Self.pages) }
            #expect((1...2).contains(count), "\(count) emissions")
            #expect(h.transport.requests.count == 16)
            #expect(h.header("If-None-Match").suffix(8) == (1...8).map { #""p\#($0)""# })
            #expect(seen.first?.query.description == "hasRows idle stale")
            #expect(seen.last?.query == QueryState(data: .hasRows, dataUpdatedAt: h.date(61), fetch: .idle, isStale: false, staleAt: h.date(121)))
            #expect(seen.last?.rows.map(\.id) == (1...8).map(String.init))
            #expect(seen.last?.lsn == 16)
        }
    }

    @Test("a refetch of identical rows emits fetching, then fresh, and no rows change")
    func identicalRefetch() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            h.transport.on("/items", reply: ItemsFixture.reply(["a", "b"]))
            try await h.store.refresh(resource)
            await h.clock.advance(by: .seconds(61))
            let (count, seen) = try await Self.emissions(h, "items") { try await h.store.refresh(resource) }
            #expect((1...2).contains(count), "\(count) emissions")
            #expect(seen.last?.syncMark?.rowsLSN == 1)
            #expect(seen.last?.lsn == 2)
        }
    }

    @Test("a 304 to an already-fresh idle collection emits at most fetching and then the renewed dataUpdatedAt and staleAt")
    func freshRenewal() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["ETag": #""e""#]), .status(304))
            try await h.store.refresh(resource)
            await h.clock.advance(by: .seconds(10))
            let (count, seen) = try await Self.emissions(h, "items") { try await h.store.refresh(resource) }
            // fetching (unless the fetch ended before its start was delivered), then idle with the renewed times.
            #expect((1...2).contains(count), "\(count) emissions")
            #expect(seen.last?.query.staleAt == h.date(70))
        }
    }

    @Test("an unrelated commit that changes nothing visible emits nothing")
    func invisibleCommit() async throws {
        try await withScriptedStore(.scripted(freshness: .manual)) { h in
            let rows = ItemsFixture.rows(["a"])
            try await h.store.append(.changed(Event.RowChanges([.upsert(rows[0])])), to: "items")
            var observer = h.store.observe("items").makeAsyncIterator()
            _ = try await observer.next()
            let before = h.store.hub.emissionCount()
            try await h.store.append(.changed(Event.RowChanges([.upsert(rows[0])])), to: "items")      // identical row
            #expect(h.store.hub.emissionCount() == before)
            try await h.store.append(.changed(Event.RowChanges([.upsert(ItemsFixture.rows(["b"])[0])])), to: "items")
            #expect(h.store.hub.emissionCount() == before + 1)
            #expect(try await observer.next()?.rows.map(\.id) == ["a", "b"])
        }
    }

    @Test("refresh(mode: .reload) sends no validators and replaces the rows; a later refresh is conditional again")
    func forcedReload() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["ETag": #""e1""#, "Last-Modified": "Thu, 01 Jan 2026 00:00:00 GMT"]),
                           ItemsFixture.reply(["a", "b"], v: 2, headers: ["ETag": #""e2""#]), .status(304))
            try await h.store.refresh(resource)
            let summary = try await h.store.refresh(resource, mode: .reload)
            #expect(summary.notModified == 0)
            #expect(summary.rows == 2)
            try await h.store.refresh(resource)
            #expect(h.header("If-None-Match") == [nil, nil, #""e2""#])
            #expect(h.header("If-Modified-Since") == [nil, nil, nil])
            #expect(try h.store.snapshot("items").rows == ItemsFixture.rows(["a", "b"], v: 2))
        }
    }

    @Test("a reload of a paged collection sends every page unconditionally")
    func pagedReload() async throws {
        try await withScriptedStore { h in
            for n in 1...3 {
                h.transport.on("/p?page=\(n)", reply: .json(Self.page(n, of: 3), headers: ["ETag": #""p\#(n)""#]))
            }
            try await h.store.refresh(Self.pages)
            try await h.store.refresh(Self.pages, mode: .reload)
            #expect(h.header("If-None-Match") == [nil, nil, nil, nil, nil, nil])
            #expect(h.transport.requests.map(\.request.url.query) == ["page=1", "page=2", "page=3", "page=1", "page=2", "page=3"])
        }
    }
}
