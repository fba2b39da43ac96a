import Foundation
@testable import Freshet
@testable import FreshetModels
import FreshetTesting
import Observation
import Testing

extension ModelTests {
    @Suite("QueryModel: typed rows, state, decode only what changed, release")
    @MainActor
    struct QueryModelTests {
        @Test("shows the stored rows decoded with their IDs, and the query state beside them")
        func storedRows() async throws {
            try await withModelStore { h in
                h.transport.on("/items", reply: ItemsFixture.reply(["a", "b"]))
                try await h.store.refresh(ItemsFixture.resource(.maxAge(.seconds(300))))
                let model = QueryModel(.items(), store: h.store)
                await waitUntil { model.rows.count == 2 }
                #expect(model.rows == [IdentifiedRow(id: "a", value: Item(id: "a", v: 1)), IdentifiedRow(id: "b", value: Item(id: "b", v: 1))])
                #expect(model.state == QueryState(data: .hasRows, dataUpdatedAt: h.date(0), fetch: .idle, isStale: false, staleAt: h.date(300)))
                #expect(model.decodingErrors.isEmpty)
                #expect(model.lsn == 1)
                #expect(!model.isLoading && !model.isFetching && model.error == nil)
                #expect(h.transport.requests.count == 1)   // fresh: observing made no request
            }
        }

        @Test("withObservationTracking: a fetch start and end change state, not rows; a changed row changes rows")
        func changesExactlyWhenRowsOrStateChange() async throws {
            try await withModelStore { h in
                let gate = Gate()
                h.transport.on("/items", reply: ItemsFixture.reply(["a", "b"]), .held(gate, then: ItemsFixture.reply(["a", "b"])),
                               .json(#"[{"id":"a","v":1},{"id":"b","v":2}]"#))
                try await h.store.refresh(ItemsFixture.resource(.maxAge(.seconds(300))))
                let model = QueryModel(.items(), store: h.store)
                await waitUntil { model.rows.count == 2 }

                // A refetch of identical rows: fetching, then idle. Rows observers are not told.
                let rowsFlag = ChangeFlag { _ = model.rows }
                let stateFlag = ChangeFlag { _ = model.state }
                let errorsFlag = ChangeFlag { _ = model.decodingErrors; _ = model.pendingMutations }
                let refresh = Task { await model.refresh() }
                await waitUntil { model.state.fetch == .fetching }
                #expect(stateFlag.hasFired)
                gate.release()
                #expect(try await refresh.value.get().rows == 2)
                await waitUntil { model.state.fetch == .idle }
                #expect(!rowsFlag.hasFired)
                #expect(!errorsFlag.hasFired)
                #expect(model.lsn == 2)

                // A refetch in which row b changed: rows observers are told, once the new row shows.
                let rowsFlag2 = ChangeFlag { _ = model.rows }
                #expect(try await model.refresh().get().lsn == 3)
                await waitUntil { model.rows.last?.value.v == 2 }
                #expect(rowsFlag2.hasFired)
                #expect(model.rows.map(\.value) == [Item(id: "a", v: 1), Item(id: "b", v: 2)])
            }
        }

        @Test("an emission that changes nothing the model shows notifies no observer")
        func invisibleEmission() async throws {
            try await withModelStore { h in
                h.transport.on("/items", reply: ItemsFixture.reply(["a", "b"]))
                let model = QueryModel(.items(), store: h.store)
                // No suspension from here on: the model's own snapshots cannot interleave.
                var cache = RowDecodingCache(QueryDefinition<Item>.items())
                let rows = ItemsFixture.rows(["a", "b"])
                let query = QueryState(data: .hasRows, dataUpdatedAt: h.date(0), isStale: false, staleAt: h.date(300))
                let first = Snapshot(collection: "items", rows: rows, syncMark: nil, status: .fresh, query: query, lsn: 7)
                model.apply(.snapshot(first, cache.update(with: first)))
                let flag = ChangeFlag { _ = model.rows; _ = model.state; _ = model.decodingErrors; _ = model.pendingMutations; _ = model.observationError }
                // The same rows (same bytes) and query state at a later LSN (a 304, an unrelated event).
                let second = Snapshot(collection: "items", rows: rows, syncMark: nil, status: .fresh, query: query, lsn: 8)
                let decoded = cache.update(with: second)
                #expect(decoded.decodeCount == 0)
                #expect(!decoded.rowsChanged)
                model.apply(.snapshot(second, decoded))
                #expect(!flag.hasFired)
                #expect(model.lsn == 8)
            }
        }

        @Test("an unchanged row is not decoded again: 2 rows, then 1 changed row, then none")
        func decodesOnlyChangedRows() async throws {
            try await withModelStore { h in
                h.transport.on("/items", reply: ItemsFixture.reply(["a", "b"]), .json(#"[{"id":"a","v":1},{"id":"b","v":2},{"id":"c","v":1}]"#),
                               .json(#"[{"id":"c","v":1},{"id":"a","v":1},{"id":"b","v":2}]"#))
                try await h.store.refresh(ItemsFixture.resource(.maxAge(.seconds(300))))
                let decodes = Counter()
                let model = QueryModel(.items(counting: decodes), store: h.store)
                await waitUntil { model.rows.count == 2 }
                #expect(decodes.count == 2)

                // b changed, c is new, a is the same bytes: 2 decodes.
                _ = try await model.refresh().get()
                await waitUntil { model.rows.count == 3 }
                #expect(decodes.count == 4)
                #expect(model.decodeCount == 4)

                // The same rows in another order: the order shows, nothing is decoded.
                _ = try await model.refresh().get()
                await waitUntil { model.rows.first?.id == "c" }
                #expect(model.rows.map(\.id) == ["c", "a", "b"])
                #expect(decodes.count == 4)
            }
        }

        @Test("releasing the model ends its observation: it is freed and the store's observer count drops to 0")
        func releaseEndsObservation() async throws {
            try await withModelStore { h in
                h.transport.on("/items", reply: ItemsFixture.reply(["a"]), ItemsFixture.reply(["a", "b"]))
                try await h.store.refresh(ItemsFixture.resource(.maxAge(.seconds(300))))
                var model: QueryModel<Item>? = QueryModel(.items(), store: h.store)
                weak let released = model
                await waitUntil { model?.rows.count == 1 }
                #expect(h.store.hub.observerCount("items") == 1)
                let task = try #require(model?.observationTask)
                model = nil
                #expect(released == nil)
                await task.value
                #expect(h.store.hub.observerCount("items") == 0)
                // Commits after the release reach nobody and lose nothing.
                try await h.store.refresh(ItemsFixture.resource(.maxAge(.seconds(300))))
                #expect(try h.store.ids("items") == ["a", "b"])
            }
        }

        @Test("a model of an empty, never-fetched collection loads it: loading, then the rows")
        func firstLoad() async throws {
            try await withModelStore { h in
                let gate = Gate()
                h.transport.on("/items", reply: .held(gate, then: ItemsFixture.reply(["a"])))
                let model = QueryModel(.items(), store: h.store)
                await waitUntil { model.isLoading }
                #expect(model.rows.isEmpty)
                gate.release()
                await waitUntil { model.rows.count == 1 && !model.isFetching }
                #expect(model.state.data == .hasRows && !model.state.isStale)
            }
        }
    }
}
