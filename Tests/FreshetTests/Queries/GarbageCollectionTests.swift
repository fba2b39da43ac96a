import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Testing
import TestSupport

extension Configuration {
    /// A scripted store (rows fresh for an hour, mutations kept pending) whose collector
    /// evicts collections unused for `seconds`.
    static func collecting(after seconds: Int64 = 300) -> Configuration {
        var configuration = Configuration.scripted(freshness: .maxAge(.seconds(3600)))
        configuration.gcTime = .after(.seconds(seconds))
        configuration.sendsMutations = false
        return configuration
    }
}

/// Issue 11 item 3: garbage collection of unobserved keys (TanStack Query's `gcTime`), driven
/// by the store's one collector timer on FreshetTesting's `TestClock`. Stored state is read
/// with `readSnapshot`, which (unlike `snapshot`) does not count as a use.
@Suite("Garbage collection of unobserved keys", .scaledTimeLimit(minutes: 1))
struct GarbageCollectionTests {
    static let comments = Resource.keyed(QueryKey("comments", ["postId": 3]), path: "/comments", rows: .rootArray, id: .field("id"))
    static let evicted300 = Event.evicted(Event.Evicted(unobservedMicros: 300_000_000, gcTimeMicros: 300_000_000))

    @Test("a keyed query nobody observes is evicted after its gc time on the test clock; a later observe shows empty and refetches")
    func evictsAndRefetches() async throws {
        try await withScriptedStore(.collecting()) { h in
            h.transport.on("/comments?postId=3", reply: ItemsFixture.reply(["1", "2"]), ItemsFixture.reply(["1", "2", "3"]))
            let key = Self.comments.collection
            try await h.store.refresh(Self.comments)
            await h.store.garbageCollector.waitUntilScheduled(by: h.date(300))
            await h.clock.advance(by: .seconds(299))
            #expect(try h.store.readSnapshot(key).rows.map(\.id) == ["1", "2"])
            await h.clock.advance(by: .seconds(1))
            await h.store.garbageCollector.waitForPasses(1)
            let evicted = try h.store.readSnapshot(key)
            #expect(evicted.rows.isEmpty)
            #expect(evicted.syncMark == nil)
            #expect(evicted.query.data == .empty)
            #expect(try h.store.collections() == [])
            let record = try #require(try h.store.allRecords().last)
            #expect(record.lsn == 2)
            #expect(record.collection == "comments{postId=3}")
            #expect(record.event == Self.evicted300)
            #expect(record.timestamp == h.date(300))
            #expect(record.summary == "evicted after 300 s unobserved (gcTime 300 s)")

            var observer = h.store.observe(Self.comments).makeAsyncIterator()
            let first = try #require(try await observer.next())
            #expect(first.query.data == .empty)
            let seen = try await collectSnapshots(&observer) { $0.rows.count == 3 && $0.query.fetch == .idle }
            #expect(seen.last?.rows.map(\.id) == ["1", "2", "3"])
            #expect(h.requestOffsets == [0, 300])
        }
    }

    @Test("an observed key is never evicted, and its gc time starts when its last observer leaves")
    func observedKeyIsKept() async throws {
        try await withScriptedStore(.collecting()) { h in
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]))
            try await h.store.refresh(ItemsFixture.resource())
            var first: CollectionObservation.AsyncIterator? = h.store.observe("items").makeAsyncIterator()
            var second: CollectionObservation.AsyncIterator? = h.store.observe("items").makeAsyncIterator()
            #expect(try await first?.next()?.rows.count == 1)
            #expect(try await second?.next()?.rows.count == 1)
            await h.store.garbageCollector.waitUntilScheduled(by: h.date(300))
            // The timer set by the fetch fires at 300 s: the pass finds the key observed.
            await h.clock.advance(by: .seconds(1000))
            await h.store.garbageCollector.waitForPasses(1)
            #expect(try h.store.readSnapshot("items").rows.count == 1)
            first = nil // one observer is left
            await h.clock.advance(by: .seconds(500))
            #expect(try h.store.readSnapshot("items").rows.count == 1)
            second = nil // the last one leaves at 1,500 s
            await h.store.garbageCollector.waitUntilScheduled(by: h.date(1800))
            await h.clock.advance(by: .seconds(299))
            #expect(try h.store.readSnapshot("items").rows.count == 1)
            await h.clock.advance(by: .seconds(1))
            await h.store.garbageCollector.waitForPasses(2)
            #expect(try h.store.readSnapshot("items").syncMark == nil)
            let records = try h.store.allRecords()
            #expect(records.map(\.kind) == [.fetched, .evicted])
            #expect(records.last?.timestamp == h.date(1800))
            #expect(records.last?.event == Self.evicted300)
            #expect(first == nil && second == nil)
        }
    }

    @Test("snapshot() restarts a key's gc time without keeping it")
    func snapshotRestartsTheClock() async throws {
        try await withScriptedStore(.collecting()) { h in
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]))
            try await h.store.refresh(ItemsFixture.resource())
            await h.store.garbageCollector.waitUntilScheduled(by: h.date(300))
            await h.clock.advance(by: .seconds(200))
            #expect(try h.store.snapshot("items").rows.count == 1)
            await h.clock.advance(by: .seconds(100))
            await h.store.garbageCollector.waitForPasses(1)
            #expect(try h.store.readSnapshot("items").rows.count == 1)
            await h.clock.advance(by: .seconds(200))
            await h.store.garbageCollector.waitForPasses(2)
            #expect(try h.store.readSnapshot("items").syncMark == nil)
            #expect(try h.store.allRecords().last?.timestamp == h.date(500))
        }
    }

    @Test("a collection with a pending mutation and a local-only collection are never evicted; an evicted record for them changes nothing")
    func pendingAndLocalOnlyAreKept() async throws {
        try await withScriptedStore(.collecting()) { h in
            h.transport.on("/todos", reply: ItemsFixture.reply(["1"]))
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]))
            try await h.store.refresh(ItemsFixture.resource(collection: "todos", path: "/todos"))
            try await h.store.refresh(ItemsFixture.resource())
            try await h.store.localWrite("favourites", [.upsert(Row(id: "25", json: Data(#"{"name":"pikachu"}"#.utf8)))])
            let edited = Row(id: "1", json: Data(#"{"id":"1","v":2}"#.utf8))
            _ = try await h.store.mutate(Mutation(name: "editTodo", ops: [.upsert(edited, in: "todos")],
                                                  request: .init(method: .patch, path: "/todos/1", body: Data(#"{"v":2}"#.utf8))))
            await h.store.garbageCollector.waitUntilScheduled(by: h.date(300))
            await h.clock.advance(by: .seconds(300))
            await h.store.garbageCollector.waitForPasses(1)
            #expect(try h.store.collections() == ["favourites", "todos"])
            #expect(try h.store.allRecords().filter { $0.kind == .evicted }.map(\.collection) == ["items"])
            let todos = try h.store.readSnapshot("todos")
            let favourites = try h.store.readSnapshot("favourites")
            #expect(todos.rows == [edited])
            #expect(favourites.rows.map(\.id) == ["25"])

            // Appended by hand (a race with the collector's check, or another process): the fold keeps both.
            try await h.store.append([("todos", Self.evicted300), ("favourites", Self.evicted300)])
            #expect(try h.store.readSnapshot("todos").rows == todos.rows)
            #expect(try h.store.readSnapshot("todos").syncMark == todos.syncMark)
            #expect(try h.store.readSnapshot("favourites").syncMark == favourites.syncMark)
            #expect(try h.store.verify().isOK)
        }
    }

    @Test("a key that was only invalidated, or only failed, is handled by the fetch rule: fetch attempts count, invalidations do not")
    func whatCountsAsFetched() async throws {
        var configuration = Configuration.collecting()
        configuration.retry = Configuration.RetryPolicy(maxAttempts: 1)
        try await withScriptedStore(configuration) { h in
            h.transport.on("/items", reply: .status(500))
            await #expect(throws: FetchError.self) { try await h.store.refresh(ItemsFixture.resource()) }
            try await h.store.invalidate("never-fetched")
            await h.store.garbageCollector.waitUntilScheduled(by: h.date(300))
            await h.clock.advance(by: .seconds(400))
            await h.store.garbageCollector.waitForPasses(1)
            #expect(try h.store.collections() == ["never-fetched"])
        }
    }

    @Test("verify passes after an eviction, replay before it shows the rows, and why says what happened")
    func verifyReplayWhy() async throws {
        try await withScriptedStore(.collecting()) { h in
            h.transport.on("/items", reply: ItemsFixture.reply(["a", "b"]))
            try await h.store.refresh(ItemsFixture.resource())
            await h.store.garbageCollector.waitUntilScheduled(by: h.date(300))
            await h.clock.advance(by: .seconds(300))
            await h.store.garbageCollector.waitForPasses(1)
            let report = try h.store.verify()
            #expect(report.isOK)
            #expect(report.lastLSN == 2)
            let before = try h.store.replay(to: .lsn(1), collections: .name("items"))
            #expect(before.snapshots.first?.rows.map(\.id) == ["a", "b"])
            let after = try h.store.replay(collections: .name("items"))
            #expect(after.snapshots.flatMap(\.rows).isEmpty)
            let why = try h.store.why("items")
            #expect(why.verdict == .evicted)
            #expect(why.summary == "evicted at 2026-01-01T00:05:00.000Z (LSN 2) after 300 s unobserved (gcTime 300 s): "
                    + "no rows or SyncMark are stored (the log keeps their history until compaction); the next observe refetches")
            let line = try #require(try h.store.allRecords().last).jsonLine
            #expect(line.contains(#""gcTimeMicros":300000000"#) && line.contains(#""kind":"evicted""#) && line.contains(#""unobservedMicros":300000000"#))

            // Compaction after the eviction: the checkpoint holds nothing of the key.
            let compaction = try h.store.compact(keeping: .zero)
            #expect(compaction.removedRecords == 2)
            #expect(try h.store.verify().isOK)
            #expect(try h.store.collections() == [])
        }
    }

    @Test("an exported log with an eviction imports byte for byte and verifies")
    func exportImport() async throws {
        try await withTemporaryDirectory { target in
            try await withScriptedStore(.collecting()) { h in
                h.transport.on("/items", reply: ItemsFixture.reply(["a"]))
                try await h.store.refresh(ItemsFixture.resource())
                await h.store.garbageCollector.waitUntilScheduled(by: h.date(300))
                await h.clock.advance(by: .seconds(300))
                await h.store.garbageCollector.waitForPasses(1)
                var lines: [String] = []
                _ = try h.store.exportLog { lines.append($0) }
                #expect(lines.count == 2)
                #expect(lines[1].contains(#""event":{"unobservedMicros":300000000,"gcTimeMicros":300000000}"#))
                let imported = try Store.importLog(lines: lines, into: target)
                #expect(imported.lastLSN == 2)
                let original = try h.store.allRecords()
                let copy = try Store(directory: target, configuration: .collecting(), dependencies: .test())
                defer { copy.close() }
                #expect(try copy.allRecords() == original)
                #expect(try copy.collections() == [])
                #expect(try copy.verify().isOK)
            }
        }
    }

    @Test("many keys come due at once: one pass evicts them all in one batch of consecutive records")
    func manyKeysOneCommit() async throws {
        try await withScriptedStore(.collecting()) { h in
            let keys = (1...20).map { Resource.keyed(QueryKey("comments", ["postId": .int($0)]), path: "/comments", rows: .rootArray, id: .field("id")) }
            for (i, key) in keys.enumerated() {
                h.transport.on("/comments?postId=\(i + 1)", reply: ItemsFixture.reply(["c\(i + 1)"]))
                try await h.store.refresh(key)
            }
            await h.store.garbageCollector.waitUntilScheduled(by: h.date(300))
            await h.clock.advance(by: .seconds(300))
            await h.store.garbageCollector.waitForPasses(1)
            let evictions = try h.store.allRecords().filter { $0.kind == .evicted }
            #expect(evictions.map(\.lsn) == (21...40).map { LSN(UInt64($0)) })
            #expect(Set(evictions.map(\.collection)) == Set(keys.map(\.collection)))
            #expect(Set(evictions.map(\.timestamp)) == [h.date(300)])
            #expect(try h.store.collections() == [])
            #expect(try h.store.verify().isOK)
        }
    }

    @Test("a resource's own gcTime overrides the configuration's, and .never keeps it")
    func perResourceGCTime() async throws {
        var configuration = Configuration.collecting()
        configuration.gcTime = .never
        try await withScriptedStore(configuration) { h in
            var short = ItemsFixture.resource(collection: "short", path: "/short")
            short.gcTime = .after(.seconds(60))
            let kept = ItemsFixture.resource()
            h.transport.on("/short", reply: ItemsFixture.reply(["s"]))
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]))
            try await h.store.refresh(short)
            try await h.store.refresh(kept)
            #expect(h.store.gcTime(for: "short") == .seconds(60))
            #expect(h.store.gcTime(for: "items") == nil)
            await h.store.garbageCollector.waitUntilScheduled(by: h.date(60))
            await h.clock.advance(by: .seconds(60))
            await h.store.garbageCollector.waitForPasses(1)
            #expect(try h.store.collections() == ["items"])
            #expect(try h.store.allRecords().last?.event == .evicted(Event.Evicted(unobservedMicros: 60_000_000, gcTimeMicros: 60_000_000)))
        }
    }

    @Test("an eviction while a key is observed (a race, or another process) refetches it for observe(resource)")
    func evictionUnderAnObserverRefetches() async throws {
        try await withScriptedStore(.collecting()) { h in
            let resource = ItemsFixture.resource()
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]), ItemsFixture.reply(["a", "b"]))
            try await h.store.refresh(resource)
            var observer = h.store.observe(resource).makeAsyncIterator()
            #expect(try await observer.next()?.rows.count == 1)
            try await h.store.append(Self.evicted300, to: "items")
            let seen = try await collectSnapshots(&observer) { $0.rows.count == 2 && $0.query.fetch == .idle }
            #expect(seen.last?.rows.map(\.id) == ["a", "b"])
            #expect(h.transport.requests.count == 2)
        }
    }

    @Test("an evicted record is the bytes docs/log-format.md §6.13 gives (the fuzz seed), and old kinds still decode")
    func recordBytes() throws {
        let seed = Array(try Data(contentsOf: FuzzRegressionTests.corpus.appendingPathComponent("record/evicted-unsealed")))
        let record = LogRecord(lsn: 1, timestamp: Date(timeIntervalSince1970: 1_767_225_900), collection: "items", event: Self.evicted300)
        let bytes = record.encoded()
        #expect(Array(bytes.dropLast(4)) == seed)
        #expect(bytes[1] == 0x0b)
        #expect(try LogRecord.decode(bytes, expectedLSN: 1) == record)
        #expect(EventKind(rawValue: 11) == .evicted && EventKind.allCases.count == 11)
    }

    @Test("an observed key evicted by another process: this process learns it by external-change detection and refetches")
    func evictedByAnotherProcess() async throws {
        try await withScriptedStore(.collecting()) { h in
            let resource = ItemsFixture.resource()
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]), ItemsFixture.reply(["a", "b"]))
            try await h.store.refresh(resource)
            var observer = h.store.observe(resource).makeAsyncIterator()
            #expect(try await observer.next()?.rows.count == 1)
            let other = try await StoreHelper(["evict", h.directory.path, "items"])
            #expect(try await other.nextLine() == "evicted 2")
            #expect(await other.waitForExit() == 0)
            #expect(try h.store.checkForExternalChanges() == ["items"])
            let seen = try await collectSnapshots(&observer) { $0.rows.count == 2 && $0.query.fetch == .idle }
            #expect(seen.last?.rows.map(\.id) == ["a", "b"])
            #expect(h.transport.requests.count == 2)
            #expect(try h.store.verify().isOK)
        }
    }
}
