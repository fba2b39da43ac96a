import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Testing
import TestSupport

/// An opaque-cursor API (`GET /feed?limit=2`, then `?cursor=…&limit=2`): rows under `items`,
/// the next cursor under `next_cursor`.
enum CursorFixture {
    static let resource = Resource.infinite("feed", path: "/feed", query: ["limit": "2"], rowsAt: "items", id: .field("id"),
                                            paging: .cursor(field: "next_cursor", parameter: "cursor"), freshness: .maxAge(.seconds(60)))

    static func body(_ ids: [String], cursor: String) -> String {
        #"{"items":["# + ids.map { #"{"id":"\#($0)"}"# }.joined(separator: ",") + #"],"next_cursor":\#(cursor)}"#
    }
}

/// Opaque cursors, and the bad input that must stop paging with a typed error (issue 10,
/// "Bad input"): each keeps the pages loaded so far.
@Suite("Paging: opaque cursors and bad input", .scaledTimeLimit(minutes: 1))
struct PagingBadInputTests {
    @Test("an opaque-cursor API pages by sending each page's cursor as the cursor parameter; a string, a number, then null")
    func opaqueCursor() async throws {
        try await withScriptedStore { h in
            h.transport.on("/feed?limit=2", reply: .json(CursorFixture.body(["a", "b"], cursor: #""c2=""#)))
            h.transport.on("/feed?cursor=c2%3D&limit=2", reply: .json(CursorFixture.body(["c", "d"], cursor: "77")))
            h.transport.on("/feed?cursor=77&limit=2", reply: .json(CursorFixture.body(["e"], cursor: "null")))
            try await h.store.refresh(CursorFixture.resource)
            #expect(try h.store.snapshot("feed").query.hasMore)
            #expect(try await h.store.loadMore(CursorFixture.resource) == .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 2)))
            #expect(try await h.store.loadMore(CursorFixture.resource) == .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 1, lsn: 3)))
            #expect(try await h.store.loadMore(CursorFixture.resource) == .endReached)
            let snapshot = try h.store.snapshot("feed")
            #expect(snapshot.rows.map(\.id) == ["a", "b", "c", "d", "e"])
            #expect(!snapshot.query.hasMore)
            #expect(snapshot.syncMark?.pages.map(\.next) == ["https://api.test/feed?cursor=c2%3D&limit=2", "https://api.test/feed?cursor=77&limit=2", nil])
            #expect(h.transport.requests.map(\.request.url.query) == ["limit=2", "cursor=c2%3D&limit=2", "cursor=77&limit=2"])
        }
    }

    @Test("loadMore of a one-page resource (paging .none, a document) fetches it once, then is endReached without a request")
    func loadMoreOfOnePageResource() async throws {
        try await withScriptedStore { h in
            let list = Resource(collection: "todos", path: "/todos", rows: .rootArray, id: .field("id"))
            let document = Resource.document("todo-1", path: "/todos/1")
            h.transport.on("/todos", reply: .json(#"[{"id":"1"},{"id":"2"}]"#))
            h.transport.on("/todos/1", reply: .json(#"{"id":"1"}"#))
            let results = [try await h.store.loadMore(list), try await h.store.loadMore(list),
                           try await h.store.loadMore(document), try await h.store.loadMore(document)]
            #expect(results == [.loaded(RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 1)), .endReached,
                                .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 1, lsn: 2)), .endReached])
            #expect(h.transport.requests.map(\.request.url.path) == ["/todos", "/todos/1"])
            #expect(try h.store.snapshot("todos").rows.map(\.id) == ["1", "2"])
        }
    }

    @Test("an empty string cursor ends the list (Slack's convention)")
    func emptyCursorEnds() async throws {
        try await withScriptedStore { h in
            h.transport.on("/feed?limit=2", reply: .json(CursorFixture.body(["a"], cursor: #""""#)))
            try await h.store.refresh(CursorFixture.resource)
            #expect(try !h.store.snapshot("feed").query.hasMore)
        }
    }

    @Test("a cursor field of the wrong type is malformedBody: the page is not folded, the loaded pages stay", arguments: ["{\"a\":1}", "[1]", "true"])
    func cursorOfWrongType(cursor: String) async throws {
        try await withScriptedStore { h in
            h.transport.on("/feed?limit=2", reply: .json(CursorFixture.body(["a", "b"], cursor: #""c2""#)))
            h.transport.on("/feed?cursor=c2&limit=2", reply: .json(CursorFixture.body(["c", "d"], cursor: cursor)))
            try await h.store.refresh(CursorFixture.resource)
            let error = await expectFetchError { try await h.store.loadMore(CursorFixture.resource) }
            #expect(error?.code == .malformedBody)
            #expect(error?.message.contains(#"the cursor "next_cursor" is"#) == true)
            let snapshot = try h.store.snapshot("feed")
            #expect(snapshot.rows.map(\.id) == ["a", "b"])
            #expect(snapshot.query.error?.reason == "malformedBody")
            #expect(snapshot.query.hasMore)
        }
    }

    @Test("a next link to another origin stops paging with crossOrigin before anything is sent to it; page 1 stays")
    func crossOriginNext() async throws {
        try await withScriptedStore { h in
            h.transport.on("/p?page=1", reply: .json(#"{"next":"https://evil.test/p?page=2","results":[{"id":"1"}]}"#))
            try await h.store.refresh(PagedFixture.resource)
            #expect(try h.store.snapshot("pages").query.hasMore)
            let error = await expectFetchError { try await h.store.loadMore(PagedFixture.resource) }
            #expect(error?.code == .crossOrigin)
            #expect(h.transport.requests.map(\.request.url.absoluteString) == ["https://api.test/p?page=1"])
            let snapshot = try h.store.snapshot("pages")
            #expect(snapshot.rows.map(\.id) == ["1"])
            #expect(snapshot.query.error?.reason == "crossOrigin")
        }
    }

    @Test("a cursor loop is pagingLoop without a request: a page naming itself, or an earlier page", arguments: [1, 2])
    func cursorLoop(target: Int) async throws {
        try await withScriptedStore { h in
            h.transport.on("/p?page=1", reply: .json(PagedFixture.body(1, of: 3)))
            h.transport.on("/p?page=2", reply: .json(#"{"next":"https://api.test/p?page=\#(target)","results":[{"id":"3"}]}"#))
            try await h.store.refresh(PagedFixture.resource)
            try await h.store.loadMore(PagedFixture.resource)
            let error = await expectFetchError { try await h.store.loadMore(PagedFixture.resource) }
            #expect(error?.code == .pagingLoop)
            #expect(h.transport.requests.count == 2)
            #expect(try h.store.snapshot("pages").rows.map(\.id) == ["1", "2", "3"])
        }
    }

    /// A next link back to page 1 spelled another way, with page 1's path and query.
    struct LoopSpelling: Sendable, CustomTestStringConvertible {
        let path: String
        let query: [String: String]
        /// Page 1's route (as the scripted server matches it) and the spelling page 2 names.
        let route: String
        let next: String
        var testDescription: String { next }
    }

    static let loopSpellings: [LoopSpelling] = {
        let q = ["a": "1", "b": "é"]   // page 1: https://api.test/q?a=1&b=%C3%A9
        return [
            LoopSpelling(path: "/q", query: q, route: "/q?a=1&b=%C3%A9", next: "https://api.test/q?b=%C3%A9&a=1"),      // parameter order
            LoopSpelling(path: "/q", query: q, route: "/q?a=1&b=%C3%A9", next: "https://api.test:443/q?a=1&b=%C3%A9"),  // default port
            LoopSpelling(path: "/q", query: q, route: "/q?a=1&b=%C3%A9", next: "https://api.test/q?a=1&b=%c3%a9"),      // percent-encoding case
            LoopSpelling(path: "/q", query: q, route: "/q?a=1&b=%C3%A9", next: "https://API.Test/q?a=%31&b=%C3%A9"),    // host case, encoded unreserved
            LoopSpelling(path: "/q", query: q, route: "/q?a=1&b=%C3%A9", next: "https://api.test/q?a=1&b=%C3%A9&"),     // trailing &
            LoopSpelling(path: "/q", query: q, route: "/q?a=1&b=%C3%A9", next: "https://api.test/q?a=1&b=%C3%A9#top"),  // fragment
            LoopSpelling(path: "/r", query: [:], route: "/r", next: "https://api.test/r?"),                            // trailing ?
            LoopSpelling(path: "/r", query: [:], route: "/r", next: "https://api.test:443/r?#"),                       // all at once
        ]
    }()

    @Test("a cursor loop is caught at once however the next link spells the earlier page, in loadMore and in a whole-list walk",
          arguments: loopSpellings, [false, true])
    func loopSpelledAnotherWay(spelling: LoopSpelling, walksAll: Bool) async throws {
        try await withScriptedStore { h in
            var resource = Resource.infinite("loop", path: spelling.path, query: spelling.query, rowsAt: "results", id: .field("id"),
                                             freshness: .maxAge(.seconds(60)))
            if walksAll { resource.pageLoading = .all }
            h.transport.on(spelling.route, reply: .json(#"{"next":"https://api.test/page-2","results":[{"id":"1"}]}"#))
            h.transport.on("/page-2", reply: .json(#"{"next":"\#(spelling.next)","results":[{"id":"2"}]}"#))
            let error: FetchError?
            if walksAll {
                error = await expectFetchError { try await h.store.refresh(resource) }
            } else {
                try await h.store.refresh(resource)
                try await h.store.loadMore(resource)
                #expect(try h.store.snapshot("loop").query.hasMore)
                error = await expectFetchError { try await h.store.loadMore(resource) }
            }
            #expect(error?.code == .pagingLoop)
            #expect(error?.message == "paging of loop does not end: page 3 would be \(spelling.next), the same page as page 1")
            #expect(h.transport.requests.count == 2)
            #expect(try h.store.snapshot("loop").rows.map(\.id) == ["1", "2"])
            guard case .fetchFailed(let failed)? = try h.store.allRecords().last?.event else {
                Issue.record("the last record is not fetchFailed")
                return
            }
            #expect(failed.page == 1)
            #expect(failed.url == "https://api.test/page-2")
        }
    }

    @Test("an infinite list holding maxPages pages stops the next loadMore with tooManyPages, without a request; hasMore stays")
    func maxPagesReached() async throws {
        var configuration = Configuration.scripted()
        configuration.maxPages = 2
        try await withScriptedStore(configuration) { h in
            PagedFixture.script(h, pages: 3)
            try await h.store.refresh(PagedFixture.resource)
            try await h.store.loadMore(PagedFixture.resource)
            let error = await expectFetchError { try await h.store.loadMore(PagedFixture.resource) }
            #expect(error?.code == .tooManyPages)
            #expect(error?.message == "paging of pages stopped at Configuration.maxPages (2) pages: page 3 (https://api.test/p?page=3) is not fetched")
            #expect(error?.lsn == 3)
            #expect(h.transport.requests.map(\.request.url.query) == ["page=1", "page=2"])
            let snapshot = try h.store.snapshot("pages")
            #expect(snapshot.rows.map(\.id) == ["1", "2", "3", "4"])
            #expect(snapshot.query.hasMore)
            #expect(snapshot.query.error?.reason == "tooManyPages")
            // A refresh still revalidates the two pages it holds.
            #expect(try await h.store.refresh(PagedFixture.resource) == RefreshSummary(pages: 2, notModified: 2, rows: 0, lsn: 5))
        }
    }

    @Test("a page with duplicate IDs is duplicateRowIDs: not folded, the loaded pages and hasMore stay")
    func duplicateIDs() async throws {
        try await withScriptedStore { h in
            h.transport.on("/p?page=1", reply: .json(PagedFixture.body(1, of: 3)))
            h.transport.on("/p?page=2", reply: .json(PagedFixture.body(2, of: 3, ids: ["3", "4", "3"])))
            try await h.store.refresh(PagedFixture.resource)
            let error = await expectFetchError { try await h.store.loadMore(PagedFixture.resource) }
            #expect(error?.code == .duplicateRowIDs)
            #expect(error?.message.contains(#"row 2 has ID "3""#) == true)
            let snapshot = try h.store.snapshot("pages")
            #expect(snapshot.rows.map(\.id) == ["1", "2"])
            #expect(snapshot.query.hasMore)
            #expect(snapshot.syncMark?.pages.count == 1)
        }
    }

    @Test("an empty page with a next link is emptyPage; an empty last page is a valid end")
    func emptyPageWithNext() async throws {
        try await withScriptedStore { h in
            h.transport.on("/p?page=1", reply: .json(PagedFixture.body(1, of: 3)))
            h.transport.on("/p?page=2", reply: .json(PagedFixture.body(2, of: 3, ids: [])), .json(PagedFixture.body(2, of: 2, ids: [])))
            try await h.store.refresh(PagedFixture.resource)
            let error = await expectFetchError { try await h.store.loadMore(PagedFixture.resource) }
            #expect(error?.code == .emptyPage)
            #expect(try h.store.snapshot("pages").rows.map(\.id) == ["1", "2"])
            #expect(try await h.store.loadMore(PagedFixture.resource) == .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 0, lsn: 3)))
            #expect(try !h.store.snapshot("pages").query.hasMore)
        }
    }

    @Test("a page that shrinks between refreshes is folded as the server sent it: its missing rows go, the later pages stay")
    func shrinkingPage() async throws {
        try await withScriptedStore { h in
            h.transport.on("/p?page=1", reply: .json(PagedFixture.body(1, of: 3)), .json(PagedFixture.body(1, of: 3, ids: ["1"])))
            h.transport.on("/p?page=2", reply: .json(PagedFixture.body(2, of: 3)))
            try await h.store.refresh(PagedFixture.resource)
            try await h.store.loadMore(PagedFixture.resource)
            try await h.store.refresh(PagedFixture.resource)
            let snapshot = try h.store.snapshot("pages")
            #expect(snapshot.rows.map(\.id) == ["1", "3", "4"])
            #expect(snapshot.query.error == nil)
            #expect(snapshot.query.hasMore)
        }
    }
}
