import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Testing
import TestSupport

@Suite("In-flight deduplication of refreshes", .scaledTimeLimit(minutes: 1))
struct DeduplicationTests {
    /// Yields until the resource registered for `collection` has policy `policy`: the refresh
    /// that registered it has passed `register`, and joins right after it with no suspension
    /// in between (see `Store.refresh`). The policies only tell the callers apart.
    static func waitUntilRegistered(_ store: Store, _ collection: String, _ policy: FreshnessPolicy) async {
        while store.freshnessPolicy(for: collection) != policy { await Task.yield() }
        for _ in 0..<100 { await Task.yield() }
    }

    @Test("three concurrent refreshes of one resource, query in different orders, share one request and one summary")
    func threeRefreshesOneRequest() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            h.transport.on("/items?a=1&b=2", reply: .held(gate, then: ItemsFixture.reply(["a", "b"], headers: ["ETag": #""d1""#])))
            let store = h.store
            // The same request three ways: a query dictionary, a query in the path in another
            // order, and half of each.
            let first = ItemsFixture.resource(.maxAge(.seconds(1)), query: ["b": "2", "a": "1"])
            let second = ItemsFixture.resource(.maxAge(.seconds(2)), path: "/items?b=2&a=1")
            let third = ItemsFixture.resource(.maxAge(.seconds(3)), path: "/items?b=2", query: ["a": "1"])
            #expect(try first.requestKey(relativeTo: scriptedBaseURL) == second.requestKey(relativeTo: scriptedBaseURL))
            #expect(try first.requestKey(relativeTo: scriptedBaseURL) == third.requestKey(relativeTo: scriptedBaseURL))

            let a = Task { try await store.refresh(first) }
            await gate.waitUntilReached(1)
            let b = Task { try await store.refresh(second) }
            await Self.waitUntilRegistered(store, "items", .maxAge(.seconds(2)))
            let c = Task { try await store.refresh(third) }
            await Self.waitUntilRegistered(store, "items", .maxAge(.seconds(3)))
            #expect(h.transport.requests.count == 1)
            #expect(try store.snapshot("items").status == .loading)

            gate.release()
            let summaries = [try await a.value, try await b.value, try await c.value]
            #expect(summaries == Array(repeating: RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 1), count: 3))
            #expect(h.transport.requests.count == 1)
            #expect(try store.allRecords().map(\.kind) == [.fetched])
            #expect(try store.snapshot("items").rows == ItemsFixture.rows(["a", "b"]))
            #expect(gate.reachedCount == 1)
        }
    }

    @Test("joined callers share a failure too: one request, one fetchFailed, the same error")
    func sharedFailure() async throws {
        try await withScriptedStore(.scripted(retry: .init(maxAttempts: 1))) { h in
            let gate = Gate()
            h.transport.on("/items", reply: .held(gate, then: .status(404)))
            let store = h.store
            let a = Task { try await store.refresh(ItemsFixture.resource(.maxAge(.seconds(1)))) }
            await gate.waitUntilReached(1)
            let b = Task { try await store.refresh(ItemsFixture.resource(.maxAge(.seconds(2)))) }
            await Self.waitUntilRegistered(store, "items", .maxAge(.seconds(2)))
            gate.release()
            let errors = [await expectFetchError(of: a), await expectFetchError(of: b)]
            #expect(errors.map { $0?.status } == [404, 404])
            #expect(errors[0] == errors[1])
            #expect(h.transport.requests.count == 1)
            let records = try store.allRecords()
            #expect(records.map(\.kind) == [.fetchFailed])
        }
    }

    @Test("two observers of a stale resource cause one request, and both see the rows")
    func twoObserversOneRequest() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            h.transport.on("/items", reply: .held(gate, then: ItemsFixture.reply(["a", "b"])))
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            var first = h.store.observe(resource).makeAsyncIterator()
            await gate.waitUntilReached(1)
            var second = h.store.observe(resource).makeAsyncIterator()
            for _ in 0..<100 { await Task.yield() }
            gate.release()
            let seenByFirst = try await collectSnapshots(&first) { $0.status == .fresh }
            let seenBySecond = try await collectSnapshots(&second) { $0.status == .fresh }
            #expect(seenByFirst.last?.rows == ItemsFixture.rows(["a", "b"]))
            #expect(seenBySecond.last?.rows == ItemsFixture.rows(["a", "b"]))
            #expect(seenByFirst.last?.lsn == 1)
            #expect(seenBySecond.last?.lsn == 1)
            #expect(h.transport.requests.count == 1)
            #expect(try h.store.allRecords().map(\.kind) == [.fetched])
        }
    }

    @Test("a refresh after invalidate does not join the held request: a second request follows the first, and its rows win")
    func invalidateWhileHeld() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            h.transport.on("/items", reply: .held(gate, then: ItemsFixture.reply(["a"], v: 1, headers: ["ETag": #""i1""#])),
                           ItemsFixture.reply(["a", "b"], v: 2, headers: ["ETag": #""i2""#]))
            let store = h.store
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            let before = Task { try await store.refresh(resource) }
            await gate.waitUntilReached(1)

            try await store.invalidate("items", reason: "server data changed")
            let after = Task { try await store.refresh(ItemsFixture.resource(.maxAge(.seconds(61)))) }
            await Self.waitUntilRegistered(store, "items", .maxAge(.seconds(61)))
            // The second refresh waits for the first to fold before it sends anything.
            #expect(h.transport.requests.count == 1)

            gate.release()
            let firstSummary = try await before.value
            let secondSummary = try await after.value
            #expect(firstSummary == RefreshSummary(pages: 1, notModified: 0, rows: 1, lsn: 2))
            #expect(secondSummary == RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 3))
            #expect(h.transport.requests.count == 2)
            // In order: the second request carries the ETag of the first response.
            #expect(h.header("If-None-Match") == [nil, #""i1""#])

            let records = try store.allRecords()
            #expect(records.map(\.kind) == [.invalidated, .fetched, .fetched])
            #expect(records.compactMap(\.fetched).map(\.rows) == [ItemsFixture.rows(["a"], v: 1), ItemsFixture.rows(["a", "b"], v: 2)])
            let snapshot = try store.snapshot("items")
            #expect(snapshot.rows == ItemsFixture.rows(["a", "b"], v: 2))
            #expect(snapshot.syncMark?.etag == #""i2""#)
            #expect(snapshot.syncMark?.invalidatedAt == nil)
            #expect(snapshot.status == .fresh)
        }
    }

    @Test("the first response, which started before the invalidation, does not clear it")
    func invalidationSurvivesOlderResponse() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            h.transport.on("/items", reply: .held(gate, then: ItemsFixture.reply(["a"])))
            let store = h.store
            let before = Task { try await store.refresh(ItemsFixture.resource(.manual)) }
            await gate.waitUntilReached(1)
            try await store.invalidate("items")
            gate.release()
            _ = try await before.value
            let snapshot = try store.snapshot("items")
            #expect(snapshot.syncMark?.invalidatedLSN == 1)
            #expect(snapshot.status == .stale)
            #expect(try await store.refreshIfNeeded(ItemsFixture.resource(.manual)) != nil)
            #expect(h.transport.requests.count == 2)
        }
    }

    @Test("invalidating an observed collection while its refresh is held: exactly two requests, in order; the observer ends on the second response")
    func invalidateObservedWhileHeld() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            h.transport.on("/items", reply: .held(gate, then: ItemsFixture.reply(["a"], v: 1, headers: ["ETag": #""o1""#])),
                           ItemsFixture.reply(["a", "b"], v: 2, headers: ["ETag": #""o2""#]))
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            var observer = h.store.observe(resource).makeAsyncIterator()
            await gate.waitUntilReached(1)
            try await h.store.invalidate("items")
            gate.release()
            let seen = try await collectSnapshots(&observer) { $0.status == .fresh && $0.lsn == 3 }
            #expect(seen.last?.rows == ItemsFixture.rows(["a", "b"], v: 2))
            await h.transport.waitForRequests(2)
            #expect(h.transport.requests.count == 2)
            #expect(h.header("If-None-Match") == [nil, #""o1""#])
            #expect(try h.store.allRecords().map(\.kind) == [.invalidated, .fetched, .fetched])
        }
    }
}
