import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Testing

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
