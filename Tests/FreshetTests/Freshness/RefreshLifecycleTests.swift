import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Testing
import TestSupport

/// The app's foreground and reconnect calls.
enum LifecycleTrigger: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case didBecomeActive
    case networkDidBecomeReachable

    func fire(_ store: Store) async {
        switch self {
        case .didBecomeActive: await store.didBecomeActive()
        case .networkDidBecomeReachable: await store.networkDidBecomeReachable()
        }
    }

    var testDescription: String { rawValue }
}

@Suite("Lifecycle triggers refresh what is observed and stale", .scaledTimeLimit(minutes: 1))
struct RefreshLifecycleTests {
    /// Fetches `items` at 0 s under `.maxAge(60 s)` and observes it by name (so observing
    /// starts no refresh of its own); returns once the observer is registered.
    static func observedItems(_ h: ScriptedStore) async throws -> CollectionObservation.AsyncIterator {
        let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
        h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["ETag": #""l1""#]), .status(304))
        try await h.store.refresh(resource)
        var observer = h.store.observe("items").makeAsyncIterator()
        // The first emission comes from the hub once the subscription is registered.
        #expect(try await observer.next()?.status == .fresh)
        return observer
    }

    @Test("an observed stale collection is refreshed: one conditional request, and the call returns after it", arguments: LifecycleTrigger.allCases)
    func staleObservedRefreshed(_ trigger: LifecycleTrigger) async throws {
        try await withScriptedStore { h in
            var observer = try await Self.observedItems(h)
            await h.clock.advance(by: .seconds(61))
            await trigger.fire(h.store)
            #expect(h.transport.requests.count == 2)
            #expect(h.requestOffsets == [0, 61])
            #expect(h.header("If-None-Match") == [nil, #""l1""#])
            #expect(try h.store.allRecords().map(\.kind) == [.fetched, .notModified])
            #expect(try h.store.snapshot("items").status == .fresh)
            let seen = try await collectSnapshots(&observer) { $0.lsn == 2 && $0.status == .fresh }
            #expect(seen.last?.rows == ItemsFixture.rows(["a"]))

            // Now fresh again: a second trigger makes no request.
            await trigger.fire(h.store)
            #expect(h.transport.requests.count == 2)
        }
    }

    @Test("an observed fresh collection makes no request", arguments: LifecycleTrigger.allCases)
    func freshObservedNotRefreshed(_ trigger: LifecycleTrigger) async throws {
        try await withScriptedStore { h in
            _ = try await Self.observedItems(h)
            await h.clock.advance(by: .seconds(59))
            await trigger.fire(h.store)
            #expect(h.transport.requests.count == 1)
            #expect(try h.store.allRecords().map(\.kind) == [.fetched])
        }
    }

    @Test("a stale collection nobody observes is not refreshed", arguments: LifecycleTrigger.allCases)
    func staleUnobservedNotRefreshed(_ trigger: LifecycleTrigger) async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]))
            try await h.store.refresh(resource)
            await h.clock.advance(by: .seconds(61))
            await trigger.fire(h.store)
            #expect(h.transport.requests.count == 1)
        }
    }

    @Test("only the stale one of two observed collections is refreshed", arguments: LifecycleTrigger.allCases)
    func onlyStaleOfTwo(_ trigger: LifecycleTrigger) async throws {
        try await withScriptedStore { h in
            let short = ItemsFixture.resource(.maxAge(.seconds(60)), collection: "short", path: "/short")
            let long = ItemsFixture.resource(.maxAge(.seconds(3600)), collection: "long", path: "/long")
            h.transport.on("/short", reply: ItemsFixture.reply(["s"]))
            h.transport.on("/long", reply: ItemsFixture.reply(["l"]))
            try await h.store.refresh(short)
            try await h.store.refresh(long)
            var a = h.store.observe("short").makeAsyncIterator()
            var b = h.store.observe("long").makeAsyncIterator()
            _ = try await a.next()
            _ = try await b.next()
            await h.clock.advance(by: .seconds(61))
            await trigger.fire(h.store)
            #expect(h.transport.requests.map(\.description) == ["GET /short", "GET /long", "GET /short"])
            #expect(h.requestOffsets == [0, 0, 61])
        }
    }

    @Test("a failing lifecycle refresh is recorded, not thrown; the observer sees it paused (offline is not failed) with the rows kept", arguments: LifecycleTrigger.allCases)
    func failureRecorded(_ trigger: LifecycleTrigger) async throws {
        try await withScriptedStore(.scripted(retry: .init(maxAttempts: 1))) { h in
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]), .fail(.cannotConnect))
            try await h.store.refresh(resource)
            var observer = h.store.observe("items").makeAsyncIterator()
            _ = try await observer.next()
            await h.clock.advance(by: .seconds(61))
            await trigger.fire(h.store)
            #expect(h.transport.requests.count == 2)
            let snapshot = try h.store.snapshot("items")
            #expect(snapshot.rows == ItemsFixture.rows(["a"]))
            #expect(snapshot.status == .stale)
            #expect(snapshot.query.fetch == .paused)
            #expect(snapshot.query.error == nil)
            #expect(snapshot.query.failureCount == 1)
            #expect(snapshot.query.dataUpdatedAt == h.date(0))
            #expect(try h.store.allRecords().map(\.kind) == [.fetched, .fetchFailed])
        }
    }
}
