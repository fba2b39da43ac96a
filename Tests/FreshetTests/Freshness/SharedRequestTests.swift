import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Testing
import TestSupport

/// The lifecycle of a shared request (issue 7, item 4): who may join it, and when it is
/// cancelled. Responses are held at `Gate`s, time is the test clock; nothing sleeps.
@Suite("The lifecycle of a shared request", .scaledTimeLimit(minutes: 1))
struct SharedRequestTests {
    /// Yields until `count` callers wait for requests of `collection` (they joined or started
    /// one): a caller joins without suspending after it registers, so this is soon.
    static func waitForWaiters(_ store: Store, _ collection: String, _ count: Int) async {
        while store.refreshes.waiterCount(collection) != count, !Task.isCancelled { await Task.yield() }
    }

    /// Observes the stale collection `items` (fetched at 0 s, `.maxAge(60 s)`, now 61 s),
    /// which refreshes it in the background, and reads up to the emission that shows the
    /// background refresh's rows as fresh: the observer "has just shown its rows".
    static func observeBackgroundRefresh(_ h: ScriptedStore) async throws -> (Resource, CollectionObservation.AsyncIterator) {
        let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
        h.transport.on("/items", reply: ItemsFixture.reply(["a"], v: 1), ItemsFixture.reply(["a"], v: 2), ItemsFixture.reply(["a"], v: 3))
        try await h.store.refresh(resource)
        await h.clock.advance(by: .seconds(61))
        var observer = h.store.observe(resource).makeAsyncIterator()
        let seen = try await collectSnapshots(&observer) { $0.status == .fresh && $0.lsn == 2 }
        #expect(seen.last?.rows == ItemsFixture.rows(["a"], v: 2))
        return (resource, observer)
    }

    // MARK: Joining only what is in flight

    @Test("refresh() right after a background refresh finished sends a request of its own and returns its summary", arguments: 0..<20)
    func refreshAfterBackgroundRefresh(_ run: Int) async throws {
        try await withScriptedStore { h in
            let (resource, _) = try await Self.observeBackgroundRefresh(h)
            let summary = try await h.store.refresh(resource)
            #expect(summary == RefreshSummary(pages: 1, notModified: 0, rows: 1, lsn: 3))
            #expect(h.transport.requests.count == 3)
            #expect(try h.store.snapshot("items").rows == ItemsFixture.rows(["a"], v: 3))
        }
    }

    @Test("refreshIfNeeded() on a collection gone stale right after a background refresh finished sends a request", arguments: 0..<20)
    func refreshIfNeededAfterBackgroundRefresh(_ run: Int) async throws {
        try await withScriptedStore { h in
            let (resource, _) = try await Self.observeBackgroundRefresh(h)
            await h.clock.advance(by: .seconds(61))
            let summary = try await h.store.refreshIfNeeded(resource)
            #expect(summary == RefreshSummary(pages: 1, notModified: 0, rows: 1, lsn: 3))
            // The observer is an observe(resource): the store's staleness timer may refresh it
            // at its staleAt (121 s, while the clock advances) before the trigger does at 122 s.
            #expect(h.requestOffsets.count == 3)
            #expect(h.requestOffsets.prefix(2) == [0, 61])
            #expect(h.requestOffsets.last.map { (121...122).contains($0) } == true, "\(h.requestOffsets)")
        }
    }

    @Test("a lifecycle trigger right after a background refresh finished refreshes what went stale since", arguments: LifecycleTrigger.allCases)
    func triggerAfterBackgroundRefresh(_ trigger: LifecycleTrigger) async throws {
        try await withScriptedStore { h in
            var (_, observer) = try await Self.observeBackgroundRefresh(h)
            await h.clock.advance(by: .seconds(61))
            await trigger.fire(h.store)
            // The observer is an observe(resource): the store's staleness timer may refresh it
            // at its staleAt (121 s, while the clock advances) before the trigger does at 122 s.
            #expect(h.requestOffsets.count == 3)
            #expect(h.requestOffsets.prefix(2) == [0, 61])
            #expect(h.requestOffsets.last.map { (121...122).contains($0) } == true, "\(h.requestOffsets)")
            let seen = try await collectSnapshots(&observer) { $0.status == .fresh && $0.lsn == 3 }
            #expect(seen.last?.rows == ItemsFixture.rows(["a"], v: 3))
        }
    }

    @Test("a refresh while the request is held joins it: one request, the same summary")
    func joinsWhatIsInFlight() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            h.transport.on("/items", reply: .held(gate, then: ItemsFixture.reply(["a"])))
            let store = h.store
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            let first = Task { try await store.refresh(resource) }
            await gate.waitUntilReached(1)
            let second = Task { try await store.refresh(resource) }
            await Self.waitForWaiters(store, "items", 2)
            gate.release()
            let summaries = [try await first.value, try await second.value]
            #expect(summaries == Array(repeating: RefreshSummary(pages: 1, notModified: 0, rows: 1, lsn: 1), count: 2))
            #expect(h.transport.requests.count == 1)
        }
    }

    // MARK: Cancelling callers

    @Test("A held, invalidate, B waits for A, the first caller is cancelled: it gets cancelled at once, the second caller still gets A's result")
    func cancellingOneCallerKeepsTheRequest() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            h.transport.on("/items", reply: .held(gate, then: ItemsFixture.reply(["a"], v: 1)), ItemsFixture.reply(["a", "b"], v: 2))
            let store = h.store
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            let first = Task { try await store.refresh(resource) }
            await gate.waitUntilReached(1)
            let second = Task { try await store.refresh(resource) }
            await Self.waitForWaiters(store, "items", 2)
            try await store.invalidate("items")
            let third = Task { try await store.refresh(resource) }
            await Self.waitForWaiters(store, "items", 3)

            first.cancel()
            // The cancelled caller returns while A is still held.
            let error = await expectFetchError(of: first)
            #expect(error?.code == .cancelled)
            #expect(gate.waitingCount == 1)
            #expect(store.refreshes.waiterCount("items") == 2)

            gate.release()
            #expect(try await second.value == RefreshSummary(pages: 1, notModified: 0, rows: 1, lsn: 2))
            #expect(try await third.value == RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 3))
            #expect(h.transport.requests.count == 2)
            #expect(try store.allRecords().map(\.kind) == [.invalidated, .fetched, .fetched])
            #expect(try store.snapshot("items").rows == ItemsFixture.rows(["a", "b"], v: 2))
        }
    }

    @Test("when the last caller is cancelled the request is cancelled, nothing is appended, and the next refresh sends a new request")
    func lastCallerCancelsTheRequest() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            h.transport.on("/items", reply: .held(gate, then: ItemsFixture.reply(["a"], v: 1)))
            let store = h.store
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            let first = Task { try await store.refresh(resource) }
            await gate.waitUntilReached(1)
            let second = Task { try await store.refresh(resource) }
            await Self.waitForWaiters(store, "items", 2)

            first.cancel()
            #expect(await expectFetchError(of: first)?.code == .cancelled)
            #expect(gate.waitingCount == 1)
            second.cancel()
            #expect(await expectFetchError(of: second)?.code == .cancelled)
            // The held request itself was cancelled: it left the gate without an answer.
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], v: 2))
            let summary = try await store.refresh(resource)
            #expect(summary == RefreshSummary(pages: 1, notModified: 0, rows: 1, lsn: 1))
            #expect(gate.waitingCount == 0)
            #expect(gate.isReleased == false)
            #expect(h.transport.requests.count == 2)
            #expect(try store.allRecords().map(\.kind) == [.fetched])
            #expect(try store.snapshot("items").rows == ItemsFixture.rows(["a"], v: 2))
        }
    }

    @Test("cancelling a caller that shares an observer's background refresh leaves the observer's refresh running")
    func cancellingCallerKeepsBackgroundRefresh() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            h.transport.on("/items", reply: .held(gate, then: ItemsFixture.reply(["a"])))
            var observer = h.store.observe(resource).makeAsyncIterator()
            await gate.waitUntilReached(1)
            // The first value and the in-flight one, read before anything can follow them.
            var seen = [try #require(try await observer.next()), try #require(try await observer.next())]
            let store = h.store
            let caller = Task { try await store.refresh(resource) }
            await Self.waitForWaiters(store, "items", 2)
            caller.cancel()
            #expect(await expectFetchError(of: caller)?.code == .cancelled)
            gate.release()
            seen += try await collectSnapshots(&observer) { $0.status == .fresh }
            #expect(StatusSequenceTests.describe(seen) == ["empty @0", "loading @0", "a1 fresh @1"])
            #expect(h.transport.requests.count == 1)
        }
    }

    @Test("a refresh called from a task that is already cancelled throws cancelled and sends nothing")
    func alreadyCancelled() async throws {
        try await withScriptedStore { h in
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]))
            let store = h.store
            let (started, go) = AsyncStream<Void>.makeStream()
            let task = Task {
                for await _ in started { break }
                return try await store.refresh(ItemsFixture.resource())
            }
            task.cancel()
            go.yield()
            #expect(await expectFetchError(of: task)?.code == .cancelled)
            #expect(h.transport.requests.isEmpty)
            let records = try store.allRecords()
            #expect(records.isEmpty)
        }
    }
}
