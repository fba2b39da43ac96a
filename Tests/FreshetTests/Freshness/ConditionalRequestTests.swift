import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Testing
import TestSupport

@Suite("Conditional requests and 304 Not Modified", .scaledTimeLimit(minutes: 1))
struct ConditionalRequestTests {
    static let lastModified = "Wed, 31 Dec 2025 12:00:00 GMT"

    @Test("the second refresh sends If-None-Match and If-Modified-Since; a 304 keeps the rows and ETag and renews freshness from its own Cache-Control")
    func revalidationWith304() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.http)
            h.transport.on("/items",
                           reply: ItemsFixture.reply(["a", "b"], headers: ["ETag": #""v1""#, "Last-Modified": Self.lastModified, "Cache-Control": "max-age=10"]),
                           .status(304, headers: ["Cache-Control": "max-age=1000"]))
            try await h.store.refresh(resource)
            let before = try h.store.snapshot("items")

            await h.clock.advance(by: .seconds(20))
            #expect(try h.store.snapshot("items").status == .stale)
            let summary = try await h.store.refresh(resource)
            #expect(summary == RefreshSummary(pages: 1, notModified: 1, rows: 0, lsn: 2))

            #expect(h.transport.requests.count == 2)
            #expect(h.header("If-None-Match") == [nil, #""v1""#])
            #expect(h.header("If-Modified-Since") == [nil, Self.lastModified])

            let records = try h.store.allRecords()
            #expect(records.map(\.kind) == [.fetched, .notModified])
            let notModified = try #require(records.last?.notModified)
            #expect(notModified.response.status == 304)
            #expect(notModified.response.cacheControl == "max-age=1000")
            #expect(notModified.response.etag == nil)
            #expect(notModified.page == nil)
            #expect(notModified.basisLSN == 1)
            #expect(records.last?.timestamp == h.date(20))

            let after = try h.store.snapshot("items")
            #expect(after.rows == before.rows)
            #expect(after.status == .fresh)
            let mark = try #require(after.syncMark)
            #expect(mark.etag == #""v1""#)
            #expect(mark.lastModified == Self.lastModified)
            #expect(mark.cacheControl == "max-age=1000")
            #expect(mark.fetchedAt == h.date(0))
            #expect(mark.fetchedLSN == 1)
            #expect(mark.rowsLSN == 1)
            #expect(mark.validatedAt == h.date(20))
            #expect(mark.lastAttemptAt == h.date(20))
            #expect(mark.lastLSN == 2)
            #expect(after.lsn == 2)

            // Fresh for 1000 s from the 304, not 10 s from the 200.
            await h.clock.advance(by: .seconds(999))
            #expect(try await h.store.refreshIfNeeded(resource) == nil)
            await h.clock.advance(by: .seconds(2))
            #expect(try await h.store.refreshIfNeeded(resource) != nil)
            // The ETag the 304 did not repeat is still sent.
            #expect(h.header("If-None-Match") == [nil, #""v1""#, #""v1""#])
            #expect(h.requestOffsets == [0, 20, 1021])
        }
    }

    @Test("a 304 that carries a new ETag replaces the stored one")
    func notModifiedWithNewETag() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.always)
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["ETag": #""v1""#]), .status(304, headers: ["ETag": #""v2""#]), .status(304))
            try await h.store.refresh(resource)
            try await h.store.refresh(resource)
            #expect(try h.store.snapshot("items").syncMark?.etag == #""v2""#)
            try await h.store.refresh(resource)
            #expect(h.header("If-None-Match") == [nil, #""v1""#, #""v2""#])
        }
    }

    @Test("a 200 to a conditional request replaces the rows and the validators")
    func changedOnServer() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.always)
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["ETag": #""v1""#, "Last-Modified": Self.lastModified]),
                           ItemsFixture.reply(["a", "c"], v: 2, headers: ["ETag": #""v2""#]))
            try await h.store.refresh(resource)
            let summary = try await h.store.refresh(resource)
            #expect(summary == RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 2))
            let snapshot = try h.store.snapshot("items")
            #expect(snapshot.rows == ItemsFixture.rows(["a", "c"], v: 2))
            #expect(snapshot.syncMark?.etag == #""v2""#)
            // A 2xx replaces the validators: the old Last-Modified does not linger.
            #expect(snapshot.syncMark?.lastModified == nil)
            #expect(snapshot.syncMark?.rowsLSN == 2)
        }
    }

    /// A two-page list: `/pages` → `/pages?page=2`, each page with its own ETag.
    static let paged = Resource.list("paged", path: "/pages", rowsAt: "results", id: .field("id"), paging: .nextField("next"), freshness: .always)

    static func page(_ ids: [String], next: String?, v: Int = 1) -> String {
        let results = ids.map { #"{"id":"\#($0)","v":\#(v)}"# }.joined(separator: ",")
        return #"{"next":\#(next.map { "\"\($0)\"" } ?? "null"),"results":[\#(results)]}"#
    }

    @Test("a paged collection revalidates each page with its own ETag")
    func pagedRevalidation() async throws {
        try await withScriptedStore { h in
            h.transport.on("/pages", reply: .json(Self.page(["1", "2"], next: "https://api.test/pages?page=2"), headers: ["ETag": #""p1""#]), .status(304))
            h.transport.on("/pages?page=2", reply: .json(Self.page(["3"], next: nil), headers: ["ETag": #""p2""#]), .status(304))
            let first = try await h.store.refresh(Self.paged)
            #expect(first == RefreshSummary(pages: 2, notModified: 0, rows: 3, lsn: 2))
            let before = try h.store.snapshot("paged")
            #expect(before.rows.map(\.id) == ["1", "2", "3"])
            #expect(before.syncMark?.pages.map(\.etag) == [#""p1""#, #""p2""#])

            let second = try await h.store.refresh(Self.paged)
            #expect(second == RefreshSummary(pages: 2, notModified: 2, rows: 0, lsn: 4))
            #expect(h.transport.requests.map(\.description) == ["GET /pages", "GET /pages?page=2", "GET /pages", "GET /pages?page=2"])
            #expect(h.header("If-None-Match") == [nil, nil, #""p1""#, #""p2""#])

            let records = try h.store.allRecords()
            #expect(records.map(\.kind) == [.fetched, .fetched, .notModified, .notModified])
            #expect(records.compactMap(\.notModified).map(\.page) == [0, 1])
            let after = try h.store.snapshot("paged")
            #expect(after.rows == before.rows)
            #expect(after.syncMark?.pages == before.syncMark?.pages)
            #expect(after.syncMark?.pageCount == 2)
        }
    }

    @Test("a paged refresh where only the second page changed: 304 for page 0, 200 for page 1 with its new ETag")
    func pagedPartialChange() async throws {
        try await withScriptedStore { h in
            h.transport.on("/pages", reply: .json(Self.page(["1", "2"], next: "https://api.test/pages?page=2"), headers: ["ETag": #""p1""#]), .status(304))
            h.transport.on("/pages?page=2", reply: .json(Self.page(["3"], next: nil), headers: ["ETag": #""p2""#]),
                           .json(Self.page(["3", "4"], next: nil, v: 2), headers: ["ETag": #""p2b""#]))
            try await h.store.refresh(Self.paged)
            let summary = try await h.store.refresh(Self.paged)
            #expect(summary == RefreshSummary(pages: 2, notModified: 1, rows: 2, lsn: 4))
            #expect(h.header("If-None-Match") == [nil, nil, #""p1""#, #""p2""#])
            let snapshot = try h.store.snapshot("paged")
            #expect(snapshot.rows.map(\.id) == ["1", "2", "3", "4"])
            #expect(snapshot.syncMark?.pages.map(\.etag) == [#""p1""#, #""p2b""#])
        }
    }

    @Test("a 304 to an unconditional request is FetchError.httpStatus 304, not retried; the rows stay")
    func notModifiedWithoutValidators() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.always)
            h.transport.on("/items", reply: ItemsFixture.reply(["a", "b"]), .status(304))
            try await h.store.refresh(resource)

            let error = try #require(await expectFetchError { try await h.store.refresh(resource) })
            #expect(error.code == .httpStatus)
            #expect(error.status == 304)
            #expect(error.lsn == 2)
            #expect(h.transport.requests.count == 2)
            #expect(h.header("If-None-Match") == [nil, nil])
            #expect(h.header("If-Modified-Since") == [nil, nil])
            #expect(h.clock.sleeperCount == 0)

            let snapshot = try h.store.snapshot("items")
            #expect(snapshot.rows == ItemsFixture.rows(["a", "b"]))
            #expect(snapshot.syncMark?.rowsLSN == 1)
            let records = try h.store.allRecords()
            #expect(records.map(\.kind) == [.fetched, .fetchFailed])
            #expect(records.last?.fetchFailed?.status == 304)
            #expect(records.last?.fetchFailed?.attempt == 1)
            #expect(records.last?.fetchFailed?.reason == "httpStatus")
        }
    }

    @Test("a 304 to the very first request fails and leaves the collection empty")
    func notModifiedFirst() async throws {
        try await withScriptedStore { h in
            h.transport.on("/items", reply: .status(304))
            let error = try #require(await expectFetchError { try await h.store.refresh(ItemsFixture.resource()) })
            #expect(error.status == 304)
            let snapshot = try h.store.snapshot("items")
            #expect(snapshot.rows == [])
            #expect(snapshot.syncMark?.validatedAt == nil)
            #expect(h.transport.requests.count == 1)
        }
    }
}
