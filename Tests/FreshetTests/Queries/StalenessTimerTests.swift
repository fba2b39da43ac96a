import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Testing
import TestSupport

/// Time-driven staleness (issue 10 item 2): one timer per store on the injected clock.
@Suite("Staleness by time: observers hear when rows go stale", .scaledTimeLimit(minutes: 1))
struct StalenessTimerTests {
    @Test("a collection observed by name emits isStale at its staleAt on the test clock, and sends no request")
    func emitsAtStaleAt() async throws {
        try await withScriptedStore { h in
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]))
            try await h.store.refresh(ItemsFixture.resource(.maxAge(.seconds(60))))
            var observer = h.store.observe("items").makeAsyncIterator()
            let first = try #require(try await observer.next())
            #expect(first.query.description == "hasRows idle fresh")
            #expect(first.query.staleAt == h.date(60))
            await h.clock.advance(by: .seconds(60))
            let next = try #require(try await observer.next())
            #expect(next.query == QueryState(data: .hasRows, dataUpdatedAt: h.date(0), fetch: .idle, isStale: true, staleAt: h.date(60)))
            #expect(next.status == .stale)
            #expect(next.lsn == 1)
            #expect(h.transport.requests.count == 1)
        }
    }

    @Test("observe(resource) refreshes when the rows reach staleAt: stale, fetching, fresh again")
    func observeResourceRefreshes() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]), ItemsFixture.reply(["a", "b"]))
            try await h.store.refresh(resource)
            var observer = h.store.observe(resource).makeAsyncIterator()
            _ = try await observer.next()
            await h.clock.advance(by: .seconds(60))
            let seen = try await collectSnapshots(&observer) { $0.rows.count == 2 && $0.query.fetch == .idle }
            // A reader slower than the commits may get only the newest (the stale emission is
            // checked by the by-name test above); the refresh at 60 s is what the timer caused.
            #expect(seen.last?.query == QueryState(data: .hasRows, dataUpdatedAt: h.date(60), fetch: .idle, isStale: false, staleAt: h.date(120)))
            #expect(h.requestOffsets == [0, 60])
        }
    }

    @Test("under .manual nothing goes stale by time: no emission and no request")
    func manualNeverByTime() async throws {
        try await withScriptedStore(.scripted(freshness: .manual)) { h in
            let resource = ItemsFixture.resource(.manual)
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]))
            try await h.store.refresh(resource)
            var observer = h.store.observe(resource).makeAsyncIterator()
            let first = try #require(try await observer.next())
            #expect(first.query.staleAt == nil)
            let before = h.store.hub.emissionCount()
            await h.clock.advance(by: .seconds(86_400))
            await h.store.didBecomeActive()
            #expect(h.store.hub.emissionCount() == before)
            #expect(h.transport.requests.count == 1)
            #expect(try h.store.snapshot("items").query.isStale == false)
        }
    }

    @Test("several observed collections share one timer and each goes stale at its own time")
    func severalCollections() async throws {
        try await withScriptedStore { h in
            h.transport.on("/a", reply: ItemsFixture.reply(["a"]))
            h.transport.on("/b", reply: ItemsFixture.reply(["b"]))
            try await h.store.refresh(ItemsFixture.resource(.maxAge(.seconds(30)), collection: "a", path: "/a"))
            try await h.store.refresh(ItemsFixture.resource(.maxAge(.seconds(90)), collection: "b", path: "/b"))
            var a = h.store.observe("a").makeAsyncIterator()
            var b = h.store.observe("b").makeAsyncIterator()
            _ = try await a.next()
            _ = try await b.next()
            await h.clock.advance(by: .seconds(30))
            #expect(try await a.next()?.query.isStale == true)
            await h.clock.advance(by: .seconds(60))
            #expect(try await b.next()?.query.isStale == true)
            #expect(h.transport.requests.count == 2)
        }
    }
}
