import Foundation
import Freshet
import FreshetHTTP
import FreshetTesting
import Testing

extension MutationTests {
    /// What a confirmation does to other collections, and what never enters the queue.
    @Suite("Invalidation and local-only writes")
    struct Invalidation {
        /// `{"count": N, "id": "all"}` under `GET /todos/count`.
        static let countResource = Resource(collection: "todos-count", path: "/todos/count", rows: .document, id: .field("id"))
        /// Another derived collection, registered but nobody observes it.
        static let statsResource = Resource(collection: "todos-stats", path: "/todos/stats", rows: .document, id: .field("id"))

        static func count(_ n: Int) -> String { #"{"count":\#(n),"id":"all"}"# }

        @Test("a confirmed mutation invalidating todos-count marks it stale at the confirmation's LSN; observed, it is refreshed with one request")
        func confirmationInvalidates() async throws {
            let world = MutationWorld()
            let refetch = Gate()
            world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")])))
            world.transport.on("/todos/count", reply: .json(Self.count(2)), .held(refetch, then: .json(Self.count(3))))
            world.transport.on("/todos/stats", reply: .json(#"{"id":"all","open":2}"#))
            world.transport.on(.post, "/todos", reply: .json(todoJSON(201, "Buy milk"), status: 201))
            try await world.withStore { store in
                try await store.refresh(todosResource)
                try await store.refresh(Self.countResource)
                try await store.refresh(Self.statsResource)
                #expect(try store.snapshot("todos-count").status == .fresh)
                #expect(try store.snapshot("todos-stats").status == .fresh)
                var counts = store.observe(Self.countResource).makeAsyncIterator()
                let first = try #require(try await counts.next())
                #expect(first.rows.map(\.json) == [Data(Self.count(2).utf8)])
                world.transport.removeRequests()

                let pending = try await store.mutate(try createTodo("tmp-1", "Buy milk", invalidates: ["todos-count", "todos-stats"]))
                let outcome = try await pending.outcome()
                await refetch.waitUntilReached()

                // Marked stale by the confirmation, in the same transaction.
                let mark = try #require(try store.snapshot("todos-count").syncMark)
                #expect(mark.invalidatedAt == world.clock.date)
                #expect(mark.invalidatedLSN == outcome.lsn)
                let stats = try store.snapshot("todos-stats")
                #expect(stats.syncMark?.invalidatedLSN == outcome.lsn)
                #expect(stats.status == .stale)
                let events = try store.mutationEvents()
                guard case .mutationConfirmed(let confirmed) = try #require(events.last).event else {
                    Issue.record("the last mutation event is not mutationConfirmed: \(events)")
                    return
                }
                #expect(confirmed.invalidates == ["todos-count", "todos-stats"])

                refetch.release()
                var latest = first
                while latest.rows.map(\.json) != [Data(Self.count(3).utf8)] {
                    latest = try #require(try await counts.next())
                }
                #expect(try store.snapshot("todos-count").syncMark?.invalidatedAt == nil)
                // One request for the observed collection; none for the unobserved one.
                #expect(world.transport.requests.map(\.description) == ["POST /todos", "GET /todos/count"])
            }
        }

        @Test("a localWrite to favourites never enters the mutation queue and sends no request")
        func localWriteIsNotQueued() async throws {
            let world = MutationWorld()
            try await world.withStore { store in
                let favourite = Row(id: "25", json: Data(#"{"name":"pikachu"}"#.utf8))
                try await store.localWrite("favourites", [.upsert(favourite)])
                #expect(try store.snapshot("favourites").rows == [favourite])
                #expect(try store.snapshot("favourites").pendingMutations.isEmpty)
                #expect(try store.pendingMutations().isEmpty)

                await store.networkDidBecomeReachable()
                await store.didBecomeActive()
                #expect(try store.pendingMutations().isEmpty)
                #expect(world.transport.requests.isEmpty)
                #expect(try store.mutationEvents().isEmpty)
                #expect(try store.allRecords().map(\.kind) == [.localWrite])
            }
        }
    }
}
