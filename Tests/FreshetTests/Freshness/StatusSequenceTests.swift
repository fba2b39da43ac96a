import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Testing

/// What the observers of a refreshing collection see, emission by emission. The response is
/// held at a gate so that each intermediate status is observed before the next one exists
/// (an observation keeps only the newest snapshot for a consumer that is behind).
@Suite("Snapshot status sequences during a refresh", .timeLimit(.minutes(1)))
struct StatusSequenceTests {
    /// A collection `items` fetched at 0 s with rows a, b (ETag "s1") under `.maxAge(60 s)`,
    /// then left to go stale: the clock is at 61 s.
    static func staleItems(_ h: ScriptedStore, then reply: ScriptedTransport.Reply, gate: Gate) async throws -> Resource {
        let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
        h.transport.on("/items", reply: ItemsFixture.reply(["a", "b"], headers: ["ETag": #""s1""#]), .held(gate, then: reply))
        try await h.store.refresh(resource)
        await h.clock.advance(by: .seconds(61))
        #expect(try h.store.snapshot("items").status == .stale)
        return resource
    }

    /// `(row IDs and versions, status)` of each snapshot, for exact comparisons in messages.
    static func describe(_ snapshots: [Snapshot]) -> [String] {
        snapshots.map { s in
            s.rows.map { String(decoding: $0.json, as: UTF8.self) }.joined() + " \(s.status) @\(s.lsn)"
        }
    }

    @Test("observing a stale collection: the stored rows as stale, then refreshing, then the new rows as fresh")
    func staleRefreshingFresh() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            let resource = try await Self.staleItems(h, then: ItemsFixture.reply(["a", "b", "c"], v: 2), gate: gate)
            let old = ItemsFixture.rows(["a", "b"])
            let new = ItemsFixture.rows(["a", "b", "c"], v: 2)

            var observer = h.store.observe(resource).makeAsyncIterator()
            let first = try #require(try await observer.next())
            #expect(first.rows == old)
            #expect(first.status == .stale)
            #expect(first.lsn == 1)
            let second = try #require(try await observer.next())
            #expect(second.rows == old)
            #expect(second.status == .refreshing)
            #expect(second.lsn == 1)
            await gate.waitUntilReached(1)

            gate.release()
            let rest = try await collectSnapshots(&observer) { $0.status == .fresh }
            #expect(rest.last?.rows == new)
            #expect(rest.last?.lsn == 2)
            // Between them at most the commit seen while the fetch is still finishing: the new
            // rows, still marked refreshing. Never the old rows again, never another status.
            #expect(rest.dropLast().allSatisfy { $0.rows == new && $0.status == .refreshing && $0.lsn == 2 },
                    "emissions after the release: \(Self.describe(rest))")
            #expect(rest.count <= 2, "emissions after the release: \(Self.describe(rest))")
            #expect(h.transport.requests.count == 2)
        }
    }

    @Test("a 304 makes no second data emission: identical rows, only the status changes (stale → refreshing → fresh)")
    func notModifiedChangesOnlyStatus() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            let resource = try await Self.staleItems(h, then: .status(304), gate: gate)
            let old = ItemsFixture.rows(["a", "b"])

            var observer = h.store.observe(resource).makeAsyncIterator()
            var seen = [try #require(try await observer.next()), try #require(try await observer.next())]
            await gate.waitUntilReached(1)
            gate.release()
            seen += try await collectSnapshots(&observer) { $0.status == .fresh }

            #expect(seen.allSatisfy { $0.rows == old }, "\(Self.describe(seen))")
            #expect(seen.allSatisfy { $0.syncMark?.rowsLSN == 1 }, "\(Self.describe(seen))")
            var statuses: [Snapshot.Status] = []
            for s in seen where statuses.last != s.status { statuses.append(s.status) }
            #expect(statuses == [.stale, .refreshing, .fresh], "\(Self.describe(seen))")
            #expect(seen.map(\.status) == [.stale, .refreshing, .fresh], "exact emissions: \(Self.describe(seen))")
            #expect(seen.last?.lsn == 2)
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
            var observer = h.store.observe(resource).makeAsyncIterator()
            let first = try #require(try await observer.next())
            #expect(first.status == .empty)
            #expect(first.rows == [])
            #expect(first.lsn == 0)
            #expect(first.syncMark == nil)
            let second = try #require(try await observer.next())
            #expect(second.status == .loading)
            #expect(second.rows == [])
            await gate.waitUntilReached(1)
            gate.release()
            let rest = try await collectSnapshots(&observer) { $0.status == .fresh }
            #expect(rest.last?.rows == ItemsFixture.rows(["a"]))
            #expect(rest.last?.lsn == 1)
            #expect(rest.dropLast().allSatisfy { $0.status == .refreshing && $0.rows == ItemsFixture.rows(["a"]) },
                    "emissions after the release: \(Self.describe(rest))")
        }
    }

    @Test("observing a fresh collection emits once and makes no request")
    func freshObservedOnce() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]))
            try await h.store.refresh(resource)
            var observer = h.store.observe(resource).makeAsyncIterator()
            let first = try #require(try await observer.next())
            #expect(first.status == .fresh)
            #expect(first.rows == ItemsFixture.rows(["a"]))
            // The background check finds the rows fresh whenever it runs: the clock does not move.
            #expect(try await h.store.refreshIfNeeded(resource) == nil)
            #expect(h.transport.requests.count == 1)
        }
    }

    @Test("a failed refresh of a stale collection: stale, refreshing, then failed with the rows kept and lastSyncedAt")
    func staleRefreshingFailed() async throws {
        try await withScriptedStore(.scripted(retry: .init(maxAttempts: 1))) { h in
            let gate = Gate()
            let resource = try await Self.staleItems(h, then: .status(500), gate: gate)
            var observer = h.store.observe(resource).makeAsyncIterator()
            #expect(try await observer.next()?.status == .stale)
            #expect(try await observer.next()?.status == .refreshing)
            gate.release()
            let rest = try await collectSnapshots(&observer) { if case .failed = $0.status { true } else { false } }
            let last = try #require(rest.last)
            #expect(last.rows == ItemsFixture.rows(["a", "b"]))
            guard case .failed(let error, let lastSyncedAt) = last.status else { return }
            #expect(error.status == 500)
            #expect(error.lsn == 2)
            #expect(lastSyncedAt == h.date(0))
        }
    }
}
