import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Testing
import TestSupport

@Suite("SyncMark after a fetch, and after a relaunch", .scaledTimeLimit(minutes: 1))
struct SyncMarkPersistenceTests {
    /// Headers of a 200 whose Date is the response time (no apparent age).
    static func headers(at date: Date) -> HTTPHeaders {
        [
            "ETag": #""v1""#,
            "Last-Modified": "Wed, 31 Dec 2025 12:00:00 GMT",
            "Cache-Control": "max-age=60, must-revalidate",
            "Date": imfDate(date),
            "Age": "5",
            "Expires": "Thu, 01 Jan 2026 00:01:10 GMT",
        ]
    }

    @Test("a fetch stores fetchedAt (the clock's date), validators and freshness headers verbatim, the attempt time, no failures")
    func markAfterFetch() async throws {
        try await withScriptedStore { h in
            await h.clock.advance(by: .seconds(10))
            h.transport.on("/items", reply: ItemsFixture.reply(["a", "b"], headers: Self.headers(at: h.date(10))))
            let summary = try await h.store.refresh(ItemsFixture.resource())
            #expect(summary == RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 1))

            let snapshot = try h.store.snapshot("items")
            #expect(snapshot.rows == ItemsFixture.rows(["a", "b"]))
            let mark = try #require(snapshot.syncMark)
            #expect(mark.fetchedAt == h.clock.date)
            #expect(mark.fetchedAt == h.date(10))
            #expect(mark.validatedAt == h.date(10))
            #expect(mark.lastAttemptAt == h.date(10))
            #expect(mark.fetchedLSN == 1)
            #expect(mark.lastLSN == 1)
            #expect(mark.rowsLSN == 1)
            #expect(mark.etag == #""v1""#)
            #expect(mark.lastModified == "Wed, 31 Dec 2025 12:00:00 GMT")
            #expect(mark.cacheControl == "max-age=60, must-revalidate")
            #expect(mark.responseDate == "Thu, 01 Jan 2026 00:00:10 GMT")
            #expect(mark.age == "5")
            #expect(mark.expires == "Thu, 01 Jan 2026 00:01:10 GMT")
            #expect(mark.consecutiveFailures == 0)
            #expect(mark.lastError == nil)
            #expect(mark.invalidatedAt == nil)
            #expect(mark.noStore == false)
            #expect(mark.pageCount == 0)
            #expect(mark.pages == [])
            #expect(mark.nextCursor == nil)
            #expect(mark.responseDelayMicros == 0)
            // max-age=60 with Age 5: fresh (RFC 9111 §4.2), 55 s of lifetime left.
            #expect(snapshot.status == .fresh)
            let verdict = Freshness.evaluate(mark, policy: .http, now: h.clock.date)
            #expect(verdict == FreshnessVerdict(isStale: false, reason: "fresh for 55 s more (max-age=60, age 5 s)", freshUntil: h.date(65)))
        }
    }

    @Test("Cache-Control sent on two field lines is stored joined with a comma")
    func cacheControlOnTwoLines() async throws {
        try await withScriptedStore { h in
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["Cache-Control": "max-age=60", "Cache-Control": "no-transform"]))
            try await h.store.refresh(ItemsFixture.resource())
            #expect(try h.store.snapshot("items").syncMark?.cacheControl == "max-age=60, no-transform")
        }
    }

    @Test("failed attempts set lastAttemptAt, lastError and consecutiveFailures; fetchedAt stays; a success resets them")
    func failuresInTheMark() async throws {
        try await withScriptedStore(.scripted(retry: .init(maxAttempts: 1))) { h in
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["ETag": #""v1""#]), .status(503), .status(500), ItemsFixture.reply(["a", "b"]))
            try await h.store.refresh(ItemsFixture.resource())

            await h.clock.advance(by: .seconds(30))
            let first = await expectFetchError { try await h.store.refresh(ItemsFixture.resource()) }
            #expect(first?.code == .httpStatus)
            #expect(first?.status == 503)
            #expect(first?.lsn == 2)
            var mark = try #require(try h.store.snapshot("items").syncMark)
            #expect(mark.fetchedAt == h.date(0))
            #expect(mark.validatedAt == h.date(0))
            #expect(mark.lastAttemptAt == h.date(30))
            #expect(mark.consecutiveFailures == 1)
            #expect(mark.lastError?.reason == "httpStatus")
            #expect(mark.lastError?.status == 503)
            #expect(mark.lastError?.lsn == 2)
            #expect(mark.etag == #""v1""#)

            await h.clock.advance(by: .seconds(30))
            let second = await expectFetchError { try await h.store.refresh(ItemsFixture.resource()) }
            #expect(second?.status == 500)
            mark = try #require(try h.store.snapshot("items").syncMark)
            #expect(mark.lastAttemptAt == h.date(60))
            #expect(mark.consecutiveFailures == 2)
            #expect(mark.lastError?.status == 500)
            #expect(mark.lastError?.lsn == 3)
            let lastError = try #require(mark.lastError)
            #expect(try h.store.snapshot("items").status == .failed(error: lastError, lastSyncedAt: h.date(0)))
            #expect(try h.store.snapshot("items").rows == ItemsFixture.rows(["a"]))

            await h.clock.advance(by: .seconds(30))
            try await h.store.refresh(ItemsFixture.resource())
            mark = try #require(try h.store.snapshot("items").syncMark)
            #expect(mark.fetchedAt == h.date(90))
            #expect(mark.lastAttemptAt == h.date(90))
            #expect(mark.consecutiveFailures == 0)
            #expect(mark.lastError == nil)
            #expect(mark.fetchedLSN == 4)
        }
    }

    @Test("after close and a reopen 3 days later the mark is unchanged and freshness is judged from absolute times: stale")
    func staleAfterRelaunch() async throws {
        try await withScriptedStore { h in
            h.transport.on("/items", reply: ItemsFixture.reply(["a", "b"], headers: Self.headers(at: h.date(0))))
            try await h.store.refresh(ItemsFixture.resource())
            let before = try #require(try h.store.snapshot("items").syncMark)
            #expect(try h.store.snapshot("items").status == .fresh)

            h.store.close()
            await h.clock.advance(by: .seconds(3 * 86_400))
            let store = try h.reopen()

            let snapshot = try store.snapshot("items")
            #expect(snapshot.syncMark == before)
            #expect(snapshot.rows == ItemsFixture.rows(["a", "b"]))
            #expect(snapshot.lsn == 1)
            // Age = 5 s (Age header) + 3 days resident; lifetime 60 s.
            #expect(snapshot.status == .stale)
            let verdict = Freshness.evaluate(snapshot.syncMark, policy: .http, now: h.clock.date)
            #expect(verdict == FreshnessVerdict(isStale: true, reason: "stale for 3.0 d (max-age=60, age 3.0 d)", freshUntil: h.date(55)))
            #expect(Freshness.evaluate(snapshot.syncMark, policy: .maxAge(.seconds(3 * 86_400 + 1)), now: h.clock.date).isStale == false)
            #expect(Freshness.evaluate(snapshot.syncMark, policy: .maxAge(.seconds(3 * 86_400)), now: h.clock.date).isStale)
            #expect(Freshness.evaluate(snapshot.syncMark, policy: .manual, now: h.clock.date).isStale == false)

            // The relaunched store goes to the network for it, conditionally.
            h.transport.on("/items", reply: .status(304))
            let summary = try #require(try await store.refreshIfNeeded(ItemsFixture.resource()))
            #expect(summary == RefreshSummary(pages: 1, notModified: 1, rows: 0, lsn: 2))
            #expect(h.transport.requests.count == 2)
            #expect(h.header("If-None-Match") == [nil, #""v1""#])
            #expect(h.requestOffsets == [0, 3 * 86_400])
        }
    }
}
