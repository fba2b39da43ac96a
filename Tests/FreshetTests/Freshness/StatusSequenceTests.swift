import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Testing
import TestSupport

/// What the observer of a refreshing collection sees, emission by emission.
///
/// The response is held at a gate, so the statuses before it (stale or empty, then
/// refreshing or loading) each exist on their own and are read before the response is let
/// through (an observation keeps its first snapshot until it is read, and after that only the
/// newest). Each test compares the whole sequence of emissions as `rows status @lsn`.
///
/// Library races these tests caught (issues 3 and 7), now fixed:
/// - The background refresh's `refreshing` emission replaced the unread first one
///   (`bufferingNewest(1)`), so the stored `stale`/`empty` state was never shown (2 runs in
///   20). The first value is now kept until read (`SnapshotBuffer`).
/// - The commit of the response was published while the fetch was still marked in flight,
///   and the end of the fetch published again: the final rows came twice, first marked
///   `refreshing`, then `fresh`. The last commit now ends the fetch before observers hear.
@Suite("Snapshot status sequences during a refresh", .scaledTimeLimit(minutes: 1))
struct StatusSequenceTests {
    /// A collection `items` fetched at 0 s with rows a, b (ETag "s1") under `.maxAge(60 s)`,
    /// then left to go stale: the clock is at 61 s. The next request is held at `gate`.
    static func staleItems(_ h: ScriptedStore, then reply: ScriptedTransport.Reply, gate: Gate) async throws -> Resource {
        let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
        h.transport.on("/items", reply: ItemsFixture.reply(["a", "b"], headers: ["ETag": #""s1""#]), .held(gate, then: reply))
        try await h.store.refresh(resource)
        await h.clock.advance(by: .seconds(61))
        #expect(try h.store.snapshot("items").status == .stale)
        return resource
    }

    /// `rows status @lsn` for each snapshot, e.g. `a1 b1 stale @1` (row ID and `v`).
    static func describe(_ snapshots: [Snapshot]) -> [String] {
        snapshots.map { s in
            struct Item: Decodable { let id: String; let v: Int }
            let rows = s.rows.map { row in
                (try? row.decode(Item.self)).map { "\($0.id)\($0.v)" } ?? row.id
            }
            return (rows + ["\(s.status)", "@\(s.lsn)"]).joined(separator: " ")
        }
    }

    /// Observes `resource` (which starts its refresh), reads the two emissions that come
    /// before the held response — the stored state, then the in-flight one (`inFlight`) —
    /// then releases `gate` and reads up to the first emission `done` accepts.
    static func observeRefresh(_ h: ScriptedStore, _ resource: Resource, gate: Gate, inFlight: Snapshot.Status,
                               done: (Snapshot) -> Bool) async throws -> [Snapshot] {
        var observer = h.store.observe(resource).makeAsyncIterator()
        var seen = [try #require(try await observer.next())]
        seen.append(try #require(try await observer.next()))
        #expect(seen[1].status == inFlight)
        await gate.waitUntilReached(1)
        gate.release()
        seen += try await collectSnapshots(&observer, until: done)
        return seen
    }

    /// Observes `items` by name (which starts nothing), reads its first emission, then starts
    /// a refresh of `resource`, reads the in-flight emission, releases `gate` and reads up to
    /// the first emission `done` accepts. Unlike ``observeRefresh``, the first emission cannot
    /// race with the refresh.
    static func observeThenRefresh(_ h: ScriptedStore, _ resource: Resource, gate: Gate,
                                   done: (Snapshot) -> Bool) async throws -> [Snapshot] {
        var observer = h.store.observe(resource.collection).makeAsyncIterator()
        var seen = [try #require(try await observer.next())]
        let store = h.store
        let refresh = Task { try await store.refresh(resource) }
        seen.append(try #require(try await observer.next()))
        await gate.waitUntilReached(1)
        gate.release()
        seen += try await collectSnapshots(&observer, until: done)
        _ = await refresh.result
        return seen
    }

    @Test("observing a stale collection: the stored rows as stale, then refreshing, then the new rows as fresh")
    func staleRefreshingFresh() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            let resource = try await Self.staleItems(h, then: ItemsFixture.reply(["a", "b", "c"], v: 2), gate: gate)
            let seen = try await Self.observeRefresh(h, resource, gate: gate, inFlight: .refreshing) { $0.status == .fresh }
            #expect(Self.describe(seen) == ["a1 b1 stale @1", "a1 b1 refreshing @1", "a2 b2 c2 fresh @2"])
            #expect(h.transport.requests.count == 2)
        }
    }

    @Test("a 304 makes no second data emission: identical rows, only the status changes (stale → refreshing → fresh)")
    func notModifiedChangesOnlyStatus() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            let resource = try await Self.staleItems(h, then: .status(304), gate: gate)
            let seen = try await Self.observeRefresh(h, resource, gate: gate, inFlight: .refreshing) { $0.status == .fresh }
            #expect(seen.allSatisfy { $0.rows == ItemsFixture.rows(["a", "b"]) && $0.syncMark?.rowsLSN == 1 }, "\(Self.describe(seen))")
            #expect(Self.describe(seen) == ["a1 b1 stale @1", "a1 b1 refreshing @1", "a1 b1 fresh @2"])
            #expect(h.header("If-None-Match") == [nil, #""s1""#])
            #expect(try h.store.allRecords().map(\.kind) == [.fetched, .notModified])
        }
    }

    @Test("an empty collection: empty, then loading, then the rows as fresh")
    func emptyLoadingFresh() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            h.transport.on("/items", reply: .held(gate, then: ItemsFixture.reply(["a"])))
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            let seen = try await Self.observeRefresh(h, resource, gate: gate, inFlight: .loading) { $0.status == .fresh }
            #expect(Self.describe(seen) == ["empty @0", "loading @0", "a1 fresh @1"])
            #expect(seen.first?.syncMark == nil)
        }
    }

    @Test("a failed refresh of a stale collection: stale, refreshing, then failed with the rows kept and lastSyncedAt")
    func staleRefreshingFailed() async throws {
        try await withScriptedStore(.scripted(retry: .init(maxAttempts: 1))) { h in
            let gate = Gate()
            let resource = try await Self.staleItems(h, then: .status(500), gate: gate)
            let seen = try await Self.observeThenRefresh(h, resource, gate: gate) {
                if case .failed = $0.status { true } else { false }
            }
            let last = try #require(seen.last)
            #expect(last.rows == ItemsFixture.rows(["a", "b"]))
            guard case .failed(let error, let lastSyncedAt) = last.status else { return }
            #expect(error.status == 500)
            #expect(error.lsn == 2)
            #expect(lastSyncedAt == h.date(0))
            #expect(Self.describe(seen) == ["a1 b1 stale @1", "a1 b1 refreshing @1", "a1 b1 \(last.status) @2"])
        }
    }

    @Test("a collection observed by name, then refreshed: stale, refreshing, then the new rows as fresh")
    func refreshOfObservedCollection() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            let resource = try await Self.staleItems(h, then: ItemsFixture.reply(["a", "c"], v: 2), gate: gate)
            let seen = try await Self.observeThenRefresh(h, resource, gate: gate) { $0.status == .fresh }
            #expect(Self.describe(seen) == ["a1 b1 stale @1", "a1 b1 refreshing @1", "a2 c2 fresh @2"])
        }
    }

    @Test("a collection observed by name, then revalidated with a 304: identical rows, stale → refreshing → fresh")
    func notModifiedOfObservedCollection() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            let resource = try await Self.staleItems(h, then: .status(304), gate: gate)
            let seen = try await Self.observeThenRefresh(h, resource, gate: gate) { $0.status == .fresh }
            #expect(Self.describe(seen) == ["a1 b1 stale @1", "a1 b1 refreshing @1", "a1 b1 fresh @2"])
            #expect(seen.allSatisfy { $0.rows == ItemsFixture.rows(["a", "b"]) && $0.syncMark?.rowsLSN == 1 })
        }
    }

    @Test("the first value is the stored state as it was (stale) even when the refresh is in flight before the consumer reads it")
    func firstValueSurvivesRefreshingBeforeRead() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            let resource = try await Self.staleItems(h, then: ItemsFixture.reply(["a", "c"], v: 2), gate: gate)
            var observer = h.store.observe(resource).makeAsyncIterator()
            await gate.waitUntilReached(1)
            // The hub delivers in order on one queue: once a second observer has its first
            // value (showing the fetch in flight), the first observer has been sent its
            // `refreshing` value too — before it read anything.
            var witness = h.store.observe("items").makeAsyncIterator()
            #expect(Self.describe([try #require(try await witness.next())]) == ["a1 b1 refreshing @1"])
            var seen = [try #require(try await observer.next()), try #require(try await observer.next())]
            gate.release()
            seen += try await collectSnapshots(&observer) { $0.status == .fresh }
            #expect(Self.describe(seen) == ["a1 b1 stale @1", "a1 b1 refreshing @1", "a2 c2 fresh @2"])
        }
    }

    @Test("a consumer that reads nothing until the refresh is done reads the stored state first, then the newest")
    func slowConsumerReadsFirstThenNewest() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            let resource = try await Self.staleItems(h, then: ItemsFixture.reply(["a", "c"], v: 2), gate: gate)
            var observer = h.store.observe(resource).makeAsyncIterator()
            await gate.waitUntilReached(1)
            gate.release()
            // The commit is made once a second observer sees it; the writer publishes a commit
            // before it makes the next one, and the hub delivers in order: once a third
            // observer has the first value of a later commit, the first observer has been
            // sent every value of the refresh.
            var witness = h.store.observe("items").makeAsyncIterator()
            _ = try await collectSnapshots(&witness) { $0.status == .fresh }
            try await h.store.invalidate("sentinel")
            var barrier = h.store.observe("sentinel").makeAsyncIterator()
            _ = try await barrier.next()
            let first = try #require(try await observer.next())
            let second = try #require(try await observer.next())
            #expect(Self.describe([first, second]) == ["a1 b1 stale @1", "a2 c2 fresh @2"])
        }
    }

    @Test("observing a fresh collection emits it as fresh and makes no request")
    func freshObservedOnce() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]))
            try await h.store.refresh(resource)
            var observer = h.store.observe(resource).makeAsyncIterator()
            let first = try #require(try await observer.next())
            #expect(Self.describe([first]) == ["a1 fresh @1"])
            // The background check finds the rows fresh whenever it runs: the clock does not move.
            #expect(try await h.store.refreshIfNeeded(resource) == nil)
            #expect(h.transport.requests.count == 1)
        }
    }
}
