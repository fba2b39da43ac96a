import Foundation
@testable import Freshet
import FreshetTesting
import Testing
import TestSupport

/// Trial findings 1 and 5: `loadMore` decides "end reached" and picks the next page's URL only
/// after the refreshes and loadMores of the collection asked for before it have folded
/// (docs/queries.md §10: requests of one collection fold in the order they were asked for).
@Suite("Paging order: loadMore decides after the requests asked for before it", .scaledTimeLimit(minutes: 1))
struct PagingOrderTests {
    @Test("a loadMore asked during a .firstPage reset of a fully loaded list waits for it, then loads page 2 (hasMore true)")
    func loadMoreDuringFirstPageReset() async throws {
        try await withScriptedStore { (h: ScriptedStore) async throws in
            let gate = Gate()
            h.transport.on("/p?page=1", reply: .json(PagedFixture.body(1, of: 3)), .held(gate, then: .json(PagedFixture.body(1, of: 3))))
            h.transport.on("/p?page=2", reply: .json(PagedFixture.body(2, of: 3)), .json(PagedFixture.body(2, of: 3)))
            h.transport.on("/p?page=3", reply: .json(PagedFixture.body(3, of: 3)))
            try await h.store.refresh(PagedFixture.resource)
            try await h.store.loadMore(PagedFixture.resource)
            try await h.store.loadMore(PagedFixture.resource)
            #expect(try !h.store.snapshot("pages").query.hasMore)
            let store = h.store
            let reset = Task { try await store.refresh(PagedFixture.resource, mode: .firstPage) }
            await gate.waitUntilReached()
            // Asked while the list still shows its last page: it must not answer endReached now.
            let more = Task { try await store.loadMore(PagedFixture.resource) }
            #expect(h.transport.requests.count == 4)
            gate.release()
            #expect(try await reset.value == RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 4))
            #expect(try await more.value == .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 5)))
            #expect(h.transport.requests.map(\.request.url.query) == ["page=1", "page=2", "page=3", "page=1", "page=2"])
            let snapshot = try h.store.snapshot("pages")
            #expect(snapshot.rows.map(\.id) == ["1", "2", "3", "4"])
            #expect(snapshot.query.hasMore)
            #expect(snapshot.syncMark?.pages.map(\.url) == ["https://api.test/p?page=1", "https://api.test/p?page=2"])
        }
    }

    @Test("a loadMore asked after a .firstPage reset that was asked during another loadMore does not join that loadMore: it loads page 2 after the reset")
    func loadMoreAfterResetDoesNotJoinEarlierLoadMore() async throws {
        try await withScriptedStore { (h: ScriptedStore) async throws in
            let gate = Gate()
            h.transport.on("/p?page=1", reply: .json(PagedFixture.body(1, of: 3)), .json(PagedFixture.body(1, of: 3)))
            h.transport.on("/p?page=2", reply: .held(gate, then: .json(PagedFixture.body(2, of: 3))), .json(PagedFixture.body(2, of: 3)))
            try await h.store.refresh(PagedFixture.resource)
            let store = h.store
            let first = Task { try await store.loadMore(PagedFixture.resource) }
            await gate.waitUntilReached()
            let reset = Task { try await store.refresh(PagedFixture.resource, mode: .firstPage) }
            await SharedRequestTests.waitForWaiters(store, "pages", 2)
            let later = Task { try await store.loadMore(PagedFixture.resource) }
            await SharedRequestTests.waitForWaiters(store, "pages", 3)
            gate.release()
            #expect(try await first.value == .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 2)))
            #expect(try await reset.value == RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 3))
            #expect(try await later.value == .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 4)))
            #expect(h.transport.requests.map(\.request.url.query) == ["page=1", "page=2", "page=1", "page=2"])
            let snapshot = try h.store.snapshot("pages")
            #expect(snapshot.rows.map(\.id) == ["1", "2", "3", "4"])
            #expect(snapshot.query.hasMore)
        }
    }

    @Test("a loadMore asked while the first fetch of the list is in flight loads page 2, never page 1 twice")
    func loadMoreDuringFirstFetch() async throws {
        try await withScriptedStore { (h: ScriptedStore) async throws in
            let gate = Gate()
            h.transport.on("/p?page=1", reply: .held(gate, then: .json(PagedFixture.body(1, of: 3))))
            h.transport.on("/p?page=2", reply: .json(PagedFixture.body(2, of: 3)))
            let store = h.store
            let first = Task { try await store.refresh(PagedFixture.resource) }
            await gate.waitUntilReached()
            let more = Task { try await store.loadMore(PagedFixture.resource) }
            #expect(h.transport.requests.count == 1)
            gate.release()
            #expect(try await first.value == RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 1))
            #expect(try await more.value == .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 2)))
            #expect(h.transport.requests.map(\.request.url.query) == ["page=1", "page=2"])
            let snapshot = try h.store.snapshot("pages")
            #expect(snapshot.rows.map(\.id) == ["1", "2", "3", "4"])
            #expect(snapshot.query.hasMore)
        }
    }

    @Test("one-page resources (paging .none, a document) asked to load more during their first fetch: endReached, one request each")
    func onePageResourceDuringFirstFetch() async throws {
        try await withScriptedStore { (h: ScriptedStore) async throws in
            let list = Resource(collection: "todos", path: "/todos", rows: .rootArray, id: .field("id"))
            let document = Resource.document("todo-1", path: "/todos/1")
            let gate = Gate()
            h.transport.on("/todos", reply: .held(gate, then: .json(#"[{"id":"1"},{"id":"2"}]"#)))
            h.transport.on("/todos/1", reply: .held(gate, then: .json(#"{"id":"1"}"#)))
            let store = h.store
            let fetches = [Task { try await store.refresh(list) }, Task { try await store.refresh(document) }]
            await gate.waitUntilReached(2)
            let more = [Task { try await store.loadMore(list) }, Task { try await store.loadMore(document) }]
            gate.release()
            for fetch in fetches { #expect(try await fetch.value.pages == 1) }
            for call in more { #expect(try await call.value == .endReached) }
            #expect(h.transport.requests.map(\.request.url.path).sorted() == ["/todos", "/todos/1"])
            #expect(try h.store.snapshot("todos").rows.map(\.id) == ["1", "2"])
            #expect(try !h.store.snapshot("todos").query.hasMore)
        }
    }
}

extension PagingOrderTests {
    @Test("refreshIfNeeded (an observer's first fetch) asked while a loadMore of the never-fetched list is in flight waits for it and sends nothing")
    func refreshIfNeededDuringFirstLoadMore() async throws {
        try await withScriptedStore { (h: ScriptedStore) async throws in
            let gate = Gate()
            h.transport.on("/p?page=1", reply: .held(gate, then: .json(PagedFixture.body(1, of: 3))), .json(PagedFixture.body(1, of: 3)))
            let store = h.store
            let more = Task { try await store.loadMore(PagedFixture.resource) }
            await gate.waitUntilReached()
            let ifNeeded = Task { try await store.refreshIfNeeded(PagedFixture.resource) }
            // It waits on the loadMore's request (a waiter of it), without a request of its own.
            while store.refreshes.waiterCount("pages") < 2 { await Task.yield() }
            gate.release()
            #expect(try await more.value == .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 1)))
            #expect(try await ifNeeded.value == nil)
            #expect(h.transport.requests.map(\.request.url.query) == ["page=1"])
            #expect(try h.store.snapshot("pages").rows.map(\.id) == ["1", "2"])
        }
    }
}
