import Foundation
@testable import Freshet
@testable import FreshetModels
import FreshetTesting
import Observation
import Testing

extension ModelTests {
    /// Trial findings 1, 5, 2 and 10 at the model layer: a `loadMore()` waits for the list's
    /// refresh in flight before it picks a page; a cancelled caller stops waiting at once while
    /// the request is committed; a closed store shows in `observationError`.
    @Suite("Model waits: loadMore after the refresh in flight, cancelled callers, a closed store")
    @MainActor
    struct ModelWaitTests {
        @Test("loadMore asked while the model's first fetch is in flight loads page 2, never page 1 twice")
        func loadMoreDuringFirstFetch() async throws {
            try await withModelStore { (h: ScriptedStore) async throws in
                let gate = Gate()
                DexFixture.script(h, count: 60, replies: [0: [.held(gate, then: .json(DexFixture.body(offset: 0, of: 60)))]])
                let model = InfiniteQueryModel(.dex(), store: h.store)
                await gate.waitUntilReached()   // the first fetch the model started
                let call = Task { await model.loadMore() }
                await waitUntil { model.isLoadingMore }
                #expect(h.transport.requests.count == 1)
                gate.release()
                #expect(try await call.value.get() == .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 20, lsn: 2)))
                await waitUntil { model.rows.count == 40 }
                #expect(model.rows.map(\.id) == (1...40).map(String.init))
                #expect(model.hasMore && !model.isLoadingMore && model.loadMoreError == nil)
                #expect(h.transport.requests.map(\.request.url.query) == ["limit=20", "offset=20&limit=20"])
            }
        }

        @Test("loadMore asked during a .firstPage reset of a fully loaded list waits for it and loads page 2: 40 rows, hasMore true")
        func loadMoreDuringFirstPageReset() async throws {
            try await withModelStore { (h: ScriptedStore) async throws in
                let gate = Gate()
                let page0 = ScriptedTransport.Reply.json(DexFixture.body(offset: 0, of: 60))
                let page20 = ScriptedTransport.Reply.json(DexFixture.body(offset: 20, of: 60))
                DexFixture.script(h, count: 60, replies: [0: [page0, .held(gate, then: page0)], 20: [page20, page20]])
                let model = InfiniteQueryModel(.dex(), store: h.store)
                await waitUntil { model.rows.count == 20 && model.state.fetch == .idle }
                _ = try await model.loadMore().get()
                _ = try await model.loadMore().get()
                await waitUntil { model.rows.count == 60 && !model.hasMore }
                let reset = Task { await model.refresh(mode: .firstPage) }
                await gate.waitUntilReached()
                let more = Task { await model.loadMore() }
                await waitUntil { model.isLoadingMore }
                gate.release()
                #expect(try await reset.value.get() == RefreshSummary(pages: 1, notModified: 0, rows: 20, lsn: 4))
                #expect(try await more.value.get() == .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 20, lsn: 5)))
                await waitUntil { model.rows.count == 40 && model.state.fetch == .idle }
                #expect(model.rows.map(\.id) == (1...40).map(String.init))
                #expect(model.hasMore && !model.isLoadingMore)
                #expect(h.transport.requests.map(\.request.url.query) == ["limit=20", "offset=20&limit=20", "offset=40&limit=20", "limit=20", "offset=20&limit=20"])
            }
        }

        @Test("refresh() whose caller is cancelled returns cancelled before the reply is released; the reply is committed after")
        func cancelledRefreshReturnsAtOnce() async throws {
            try await withModelStore { (h: ScriptedStore) async throws in
                h.transport.on("/items", reply: ItemsFixture.reply(["a"]))
                try await h.store.refresh(ItemsFixture.resource(.maxAge(.seconds(300))))
                let gate = Gate()
                h.transport.on("/items", reply: .held(gate, then: ItemsFixture.reply(["a", "b"])))
                let model = QueryModel(.items(), store: h.store)
                await waitUntil { model.rows.count == 1 }
                let call = Task { await model.refresh() }
                await gate.waitUntilReached()
                call.cancel()
                // Returns while the reply is still held at the gate.
                let result = await call.value
                #expect(result == .failure(FetchError(.cancelled, "the caller stopped waiting for the refresh of items; the request goes on and is committed", url: "/items")))
                #expect(!gate.isReleased && gate.waitingCount == 1)
                gate.release()
                await waitUntil { model.rows.count == 2 && model.state.fetch == .idle }
                #expect(model.rows.map(\.id) == ["a", "b"])
                #expect(try h.store.ids("items") == ["a", "b"])
                #expect(try h.store.allRecords(collection: "items").map(\.kind) == [.fetched, .fetched])
            }
        }

        @Test("loadMore() whose callers are cancelled returns cancelled before the page is released; the page is committed and isLoadingMore follows it")
        func cancelledLoadMoreReturnsAtOnce() async throws {
            try await withModelStore { (h: ScriptedStore) async throws in
                let gate = Gate()
                DexFixture.script(h, count: 60, replies: [20: [.held(gate, then: .json(DexFixture.body(offset: 20, of: 60)))]])
                let model = InfiniteQueryModel(.dex(), store: h.store)
                await waitUntil { model.rows.count == 20 && model.state.fetch == .idle }
                let first = Task { await model.loadMore() }
                await gate.waitUntilReached()
                let joined = Task { await model.loadMore() }   // joins the load in flight
                await waitUntil { model.isLoadingMore }
                first.cancel()
                joined.cancel()
                let cancelled = FetchError(.cancelled, "the caller stopped waiting for the next page of pokemon; the request goes on and is committed", url: "/api/v2/pokemon/")
                #expect(await first.value == .failure(cancelled))
                #expect(await joined.value == .failure(cancelled))
                #expect(!gate.isReleased && gate.waitingCount == 1)
                #expect(model.isLoadingMore && model.loadMoreError == nil)
                gate.release()
                await waitUntil { model.rows.count == 40 && !model.isLoadingMore }
                #expect(model.loadMoreError == nil && model.hasMore)
                #expect(try h.store.ids("pokemon") == (1...40).map(String.init))
                #expect(h.transport.requests.map(\.request.url.query) == ["limit=20", "offset=20&limit=20"])
            }
        }

        @Test("closing the store sets observationError to a closed StoreError in every model, rows kept (withObservationTracking)")
        func closedStoreShows() async throws {
            try await withModelStore { (h: ScriptedStore) async throws in
                DexFixture.script(h, count: 40)
                h.transport.on("/items", reply: ItemsFixture.reply(["a", "b"]))
                let items = QueryModel(.items(), store: h.store)
                let list = InfiniteQueryModel(.dex(), store: h.store)
                await waitUntil { items.rows.count == 2 && list.rows.count == 20 && items.state.fetch == .idle && list.state.fetch == .idle }
                #expect(items.observationError == nil && list.observationError == nil)
                let itemsFlag = ChangeFlag { _ = items.observationError }
                let listFlag = ChangeFlag { _ = list.observationError }
                let rowsFlag = ChangeFlag { _ = items.rows; _ = list.rows }
                h.store.close()
                await waitUntil { items.observationError != nil && list.observationError != nil }
                #expect(itemsFlag.hasFired && listFlag.hasFired && !rowsFlag.hasFired)
                let closed = StoreError(.closed, "the store at \(h.store.directory.path) closed: the model keeps the rows it shows and receives no more snapshots")
                #expect(items.observationError == closed)
                #expect(list.observationError == closed)
                #expect(items.rows.map(\.id) == ["a", "b"])
                #expect(list.rows.map(\.id) == (1...20).map(String.init))
            }
        }
    }
}
