import Foundation
import FreshetHTTP
import Testing
@testable import Freshet

@Suite("Observing collections")
struct ObservationTests {
    @Test("after a reopen the first value comes from disk, with the rows and the LSN")
    func firstValueFromDiskAfterReopen() async throws {
        try await withTemporaryDirectory { directory in
            let first = try Store(directory: directory, configuration: .test(), dependencies: .test())
            try await first.append(page(0, isLast: false, rows("1", "2"), next: "p1"), to: "pokemon")
            try await first.append(page(1, isLast: true, rows("3")), to: "pokemon")
            try await first.localWrite("favourites", [.upsert(row("25"))])
            first.close()

            let reopened = try Store(directory: directory, configuration: .test(), dependencies: .test())
            defer { reopened.close() }
            var iterator = reopened.observe("pokemon").makeAsyncIterator()
            let snapshot = try #require(try await iterator.next())
            #expect(snapshot.collection == "pokemon")
            #expect(snapshot.rows == rows("1", "2", "3"))
            #expect(snapshot.lsn == 2)
            #expect(snapshot.status == .fresh)
            #expect(snapshot.syncMark?.pageCount == 2)
            #expect(snapshot.syncMark?.fetchedAt == TestClock.now)
        }
    }

    @Test("an empty collection is observed as empty at LSN 0")
    func firstValueOfEmptyCollection() async throws {
        try await withTemporaryStore { store in
            var iterator = store.observe("nothing").makeAsyncIterator()
            let snapshot = try #require(try await iterator.next())
            #expect(snapshot == Snapshot(collection: "nothing", rows: [], syncMark: nil, status: .empty, lsn: .zero))
        }
    }

    @Test("a commit to the collection is followed by a new value")
    func newValueAfterCommit() async throws {
        try await withTemporaryStore { store in
            try await store.localWrite("favourites", [.upsert(row("1"))])
            var iterator = store.observe("favourites").makeAsyncIterator()
            let first = try #require(try await iterator.next())
            #expect(first.lsn == 1)
            #expect(first.rows.map(\.id) == ["1"])

            try await store.invalidate("other") // LSN 2, another collection
            let lsn = try await store.localWrite("favourites", [.upsert(row("2")), .delete(id: "1")])
            #expect(lsn == 3)
            let second = try #require(try await iterator.next())
            #expect(second.lsn == 3)
            #expect(second.rows.map(\.id) == ["2"])
        }
    }

    @Test("observers that subscribed one after another share one comparison per commit, and each gets the commit once")
    func observersShareOneComparison() async throws {
        try await withTemporaryStore { store in
            try await store.localWrite("shared", [.upsert(row("1"))])
            var iterators: [CollectionObservation.AsyncIterator] = []
            for _ in 0..<20 {
                var iterator = store.observe("shared").makeAsyncIterator()
                let first = try #require(try await iterator.next())
                #expect(first.lsn == 1)
                iterators.append(iterator)
            }
            let comparisons = store.hub.comparisonCount()
            let emissions = store.hub.emissionCount()
            try await store.localWrite("shared", [.upsert(row("2"))])
            for i in iterators.indices {
                let next = try #require(try await iterators[i].next())
                #expect(next.lsn == 2)
                #expect(next.rows.map(\.id) == ["1", "2"])
            }
            // Each first delivery showed exactly what the one before it showed, so all 20
            // observers hold one `last`: the commit compares once (it compared 20 times, each
            // walking the rows, before observers shared it).
            #expect(store.hub.comparisonCount() - comparisons == 1)
            #expect(store.hub.emissionCount() - emissions == 20)
            // They still share it: the next commit compares once too.
            try await store.localWrite("shared", [.delete(id: "1")])
            for i in iterators.indices {
                let next = try #require(try await iterators[i].next())
                #expect(next.lsn == 3)
                #expect(next.rows.map(\.id) == ["2"])
            }
            #expect(store.hub.comparisonCount() - comparisons == 2)
            #expect(store.hub.emissionCount() - emissions == 40)
        }
    }

    @Test("a slow consumer gets the newest value, never an older one afterwards")
    func slowConsumerGetsNewest() async throws {
        try await withTemporaryStore { store in
            var iterator = store.observe("counter").makeAsyncIterator()
            let first = try #require(try await iterator.next())
            #expect(first.lsn == .zero)

            for i in 1...50 {
                let lsn = try await store.localWrite("counter", [.upsert(row("n", "\(i)"))])
                #expect(lsn == LSN(UInt64(i)))
            }
            // The writer publishes a commit before it starts the next one, and the hub
            // delivers in order: once a later commit has returned and a new observer has
            // had its first value, the delivery of LSN 50 has happened.
            try await store.invalidate("sentinel")
            var sentinel = store.observe("sentinel").makeAsyncIterator()
            _ = try await sentinel.next()

            let newest = try #require(try await iterator.next())
            #expect(newest.lsn == 50)
            #expect(try name(of: newest.rows[0]) == "50")

            try await store.localWrite("counter", [.upsert(row("n", "52"))])
            let next = try #require(try await iterator.next())
            #expect(next.lsn == 52)
            #expect(try name(of: next.rows[0]) == "52")
        }
    }

    @Test("every observer of a collection sees the same value")
    func severalObservers() async throws {
        try await withTemporaryStore { store in
            var a = store.observe("items").makeAsyncIterator()
            var b = store.observe("items").makeAsyncIterator()
            #expect(try await a.next()?.lsn == .zero)
            #expect(try await b.next()?.lsn == .zero)
            try await store.append(replace(rows("1", "2")), to: "items")
            let fromA = try #require(try await a.next())
            let fromB = try #require(try await b.next())
            #expect(fromA == fromB)
            #expect(fromA.rows.map(\.id) == ["1", "2"])
        }
    }

    @Test("closing the store ends the observation without an error")
    func closeEndsObservation() async throws {
        try await withTemporaryStore { store in
            var iterator = store.observe("items").makeAsyncIterator()
            _ = try await iterator.next()
            store.close()
            #expect(try await iterator.next() == nil)
        }
    }

    @Test("closing right after a commit ends the observation without an error")
    func closeAfterCommitEndsObservation() async throws {
        // The commit's delivery may still be queued when close() runs; the observation must
        // still end normally (the documented error is for unreadable state, not for closing).
        for _ in 0..<20 {
            try await withTemporaryStore { store in
                var iterator = store.observe("items").makeAsyncIterator()
                _ = try await iterator.next()
                try await store.append(replace(rows("1")), to: "items")
                store.close()
                var values: [LSN] = []
                do {
                    while let snapshot = try await iterator.next() { values.append(snapshot.lsn) }
                } catch {
                    Issue.record("the observation threw \(error) after close (values: \(values))")
                }
            }
        }
    }

    @Test("a refresh shows loading, then the rows with status fresh")
    func statusDuringRefresh() async throws {
        let (gate, open) = AsyncStream<Void>.makeStream()
        let transport = StubTransport { request in
            for await _ in gate { break }
            let body = #"{"results":[{"id":1,"name":"a"},{"id":2,"name":"b"}]}"#
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(body.utf8), url: request.url)
        }
        try await withTemporaryStore(dependencies: .test(transport: transport)) { store in
            var iterator = store.observe("items").makeAsyncIterator()
            #expect(try await iterator.next()?.status == .empty)

            let refresh = Task { try await store.refresh(.list("items", path: "/items", id: .field("id"), paging: .none)) }
            let loading = try #require(try await iterator.next())
            #expect(loading.status == .loading)
            #expect(loading.rows == [])

            open.yield()
            var last = loading
            while last.status != .fresh {
                last = try #require(try await iterator.next())
                #expect(last.status == .refreshing || last.status == .fresh)
                #expect(last.rows.map(\.id) == ["1", "2"])
            }
            #expect(last.lsn == 1)
            let summary = try await refresh.value
            #expect(summary.pages == 1)
            #expect(summary.rows == 2)
            #expect(summary.lsn == 1)
        }
    }
}
