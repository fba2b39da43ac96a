import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Testing
import TestSupport

/// The query state of snapshots (issue 10 item 1): data, fetch, staleness and error kept
/// apart; offline pauses instead of backing off; lifecycle calls clear errors by refetching.
@Suite("Query state: data, fetch, staleness and error apart", .scaledTimeLimit(minutes: 1))
struct QueryStateTests {
    @Test("fresh rows after a success: hasRows, dataUpdatedAt, idle, not stale until staleAt, no error")
    func freshAfterSuccess() async throws {
        try await withScriptedStore { h in
            h.transport.on("/items", reply: ItemsFixture.reply(["a", "b"]))
            try await h.store.refresh(ItemsFixture.resource(.maxAge(.seconds(60))))
            await h.clock.advance(by: .seconds(10))
            let q = try h.store.snapshot("items").query
            #expect(q == QueryState(data: .hasRows, dataUpdatedAt: h.date(0), fetch: .idle, isStale: false, staleAt: h.date(60),
                                    error: nil, errorUpdatedAt: nil, failureCount: 0))
            await h.clock.advance(by: .seconds(50))
            let stale = try h.store.snapshot("items").query
            #expect(stale.isStale)
            #expect(stale.staleAt == h.date(60))
        }
    }

    @Test("an error never hides fresh rows: after a failed refresh the rows stay fresh and the error has its time and count")
    func errorBesideFreshRows() async throws {
        try await withScriptedStore(.scripted(retry: .init(maxAttempts: 1))) { h in
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]), .status(500))
            try await h.store.refresh(resource)
            await h.clock.advance(by: .seconds(10))
            _ = await expectFetchError { try await h.store.refresh(resource) }
            let snapshot = try h.store.snapshot("items")
            let q = snapshot.query
            #expect(q.data == .hasRows)
            #expect(q.isStale == false)
            #expect(q.staleAt == h.date(60))
            #expect(q.fetch == .idle)
            #expect(q.error?.status == 500)
            #expect(q.error?.lsn == 2)
            #expect(q.errorUpdatedAt == h.date(10))
            #expect(q.failureCount == 1)
            #expect(q.dataUpdatedAt == h.date(0))
            // The summary keeps its old meaning (source compatibility).
            #expect(snapshot.status == .failed(error: try #require(q.error), lastSyncedAt: h.date(0)))
        }
    }

    @Test("a failed refresh followed by reachability: the observed collection is refetched, error cleared, rows fresh")
    func reachabilityClearsError() async throws {
        try await withScriptedStore(.scripted(retry: .init(maxAttempts: 1))) { h in
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]), .status(500), ItemsFixture.reply(["a", "b"]))
            try await h.store.refresh(resource)
            await h.clock.advance(by: .seconds(10))
            _ = await expectFetchError { try await h.store.refresh(resource) }
            var observer = h.store.observe("items").makeAsyncIterator()
            #expect(try await observer.next()?.query.error?.status == 500)
            await h.clock.advance(by: .seconds(5))
            await h.store.networkDidBecomeReachable()
            #expect(h.requestOffsets == [0, 10, 15])
            let snapshot = try h.store.snapshot("items")
            #expect(snapshot.rows == ItemsFixture.rows(["a", "b"]))
            #expect(snapshot.query == QueryState(data: .hasRows, dataUpdatedAt: h.date(15), fetch: .idle, isStale: false, staleAt: h.date(75)))
            #expect(snapshot.status == .fresh)
            let seen = try await collectSnapshots(&observer) { $0.query.error == nil && $0.query.fetch == .idle }
            #expect(seen.last?.rows == ItemsFixture.rows(["a", "b"]))
        }
    }

    @Test("a fresh observed collection without an error makes no request on foreground")
    func freshMakesNoRequest() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]))
            try await h.store.refresh(resource)
            var observer = h.store.observe("items").makeAsyncIterator()
            _ = try await observer.next()
            await h.store.didBecomeActive()
            #expect(h.transport.requests.count == 1)
        }
    }

    @Test("a fetch that cannot connect pauses at once: one attempt, no backoff, fetch paused and no error")
    func offlinePauses() async throws {
        try await withScriptedStore { h in
            // The default retry policy (3 attempts) would back off 1 s and 2 s for a 5xx.
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]), .fail(.cannotConnect), ItemsFixture.reply(["a", "b"]))
            try await h.store.refresh(resource)
            await h.clock.advance(by: .seconds(61))
            let error = await expectFetchError { try await h.store.refresh(resource) }
            #expect(error?.code == .cannotConnect)
            #expect(h.requestOffsets == [0, 61])
            #expect(try h.store.allRecords().map(\.kind) == [.fetched, .fetchFailed])
            let q = try h.store.snapshot("items").query
            #expect(q == QueryState(data: .hasRows, dataUpdatedAt: h.date(0), fetch: .paused, isStale: true, staleAt: h.date(60),
                                    error: nil, errorUpdatedAt: nil, failureCount: 1))
        }
    }

    @Test("a paused fetch resumes on reachability even when nobody observes the collection", arguments: [true, false])
    func pausedResumes(reachability: Bool) async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            h.transport.on("/items", reply: .fail(.cannotConnect), ItemsFixture.reply(["a", "b"]))
            _ = await expectFetchError { try await h.store.refresh(resource) }
            let paused = try h.store.snapshot("items").query
            #expect(paused == QueryState(data: .empty, fetch: .paused, isStale: true, failureCount: 1))
            await h.clock.advance(by: .seconds(3))
            if reachability { await h.store.networkDidBecomeReachable() } else { await h.store.didBecomeActive() }
            #expect(h.requestOffsets == [0, 3])
            let snapshot = try h.store.snapshot("items")
            #expect(snapshot.rows == ItemsFixture.rows(["a", "b"]))
            #expect(snapshot.query == QueryState(data: .hasRows, dataUpdatedAt: h.date(3), fetch: .idle, isStale: false, staleAt: h.date(63)))
        }
    }

    @Test("an observer sees the pause at once: loading, then paused with no rows and no error")
    func observerSeesPause() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            h.transport.on("/items", reply: .held(gate, then: .fail(.cannotConnect)))
            var observer = h.store.observe(ItemsFixture.resource(.maxAge(.seconds(60)))).makeAsyncIterator()
            var seen = [try #require(try await observer.next())]
            seen.append(try #require(try await observer.next()))
            await gate.waitUntilReached(1)
            gate.release()
            seen += try await collectSnapshots(&observer) { $0.query.fetch == .paused }
            #expect(seen.map(\.query.description) == ["empty idle stale", "empty fetching stale", "empty paused stale"])
            #expect(h.transport.requests.count == 1)
        }
    }

    @Test("after a relaunch the stored SyncMark says paused again, and the summary follows it (stale, not failed)")
    func pausedSurvivesRelaunch() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]), .fail(.cannotConnect))
            try await h.store.refresh(resource)
            _ = await expectFetchError { try await h.store.refresh(resource) }
            try h.reopen()
            let snapshot = try h.store.snapshot("items")
            #expect(snapshot.query.fetch == .paused)
            #expect(snapshot.query.error == nil)
            #expect(snapshot.query.failureCount == 1)
            #expect(snapshot.query.isStale)
            #expect(snapshot.status.description == "stale")
        }
    }

    @Test("local-only rows are fresh with no staleAt and no dataUpdatedAt; invalidated they are stale")
    func localOnly() async throws {
        try await withScriptedStore { h in
            try await h.store.append(.localWrite(Event.RowChanges([.upsert(ItemsFixture.rows(["f"])[0])])), to: "favourites")
            #expect(try h.store.snapshot("favourites").query == QueryState(data: .hasRows, fetch: .idle, isStale: false))
            try await h.store.invalidate("favourites")
            #expect(try h.store.snapshot("favourites").query == QueryState(data: .hasRows, fetch: .idle, isStale: true))
            #expect(try h.store.snapshot("never").query == QueryState(data: .empty, fetch: .idle, isStale: true))
        }
    }

    @Test("a snapshot built by hand reads its query state off the status")
    func handBuilt() {
        let failure = SyncMark.FailureInfo(reason: "httpStatus", status: 503, message: "answered 503", lsn: 4)
        let s = Snapshot(collection: "c", rows: ItemsFixture.rows(["a"]), syncMark: nil, status: .failed(error: failure, lastSyncedAt: nil), lsn: 4)
        #expect(s.query == QueryState(data: .hasRows, fetch: .idle, isStale: false, error: failure))
        #expect(Snapshot(collection: "c", rows: [], syncMark: nil, status: .loading, lsn: 0).query == QueryState(data: .empty, fetch: .fetching, isStale: false))
    }
}
