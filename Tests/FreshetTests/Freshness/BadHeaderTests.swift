import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Testing
import TestSupport

@Suite("Malformed and extreme freshness and retry headers", .scaledTimeLimit(minutes: 1))
struct BadHeaderTests {
    @Test("an unparseable or negative max-age counts as max-age=0: stale at once (RFC 9111 §1.2.2, §4.2.1)",
          arguments: ["max-age=abc", "max-age=-5", "max-age=", "max-age", "max-age=1.5", "max-age=60, max-age=120"])
    func unparseableMaxAge(_ cacheControl: String) async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.http)
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["Cache-Control": cacheControl, "Expires": imfDate(h.date(3600)), "Date": imfDate(h.date(0))]))
            try await h.store.refresh(resource)
            #expect(try h.store.snapshot("items").status == .stale)
            #expect(try h.store.snapshot("items").syncMark?.cacheControl == cacheControl)
            #expect(try await h.store.refreshIfNeeded(resource) != nil)
            #expect(h.requestOffsets == [0, 0])
        }
    }

    @Test("a quoted max-age=\"60\" means max-age=60 (RFC 9111 §5.2)")
    func quotedMaxAge() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.http)
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["Cache-Control": #"max-age="60""#]))
            try await h.store.refresh(resource)
            await h.clock.advance(by: .seconds(59))
            #expect(try await h.store.refreshIfNeeded(resource) == nil)
            await h.clock.advance(by: .seconds(2))
            #expect(try await h.store.refreshIfNeeded(resource) != nil)
        }
    }

    @Test("a huge max-age is clamped (2^31 s) and keeps the rows fresh for years without overflowing")
    func hugeMaxAge() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.http)
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["Cache-Control": "max-age=99999999999999999999999999"]))
            try await h.store.refresh(resource)
            await h.clock.advance(by: .seconds(10 * 365 * 86_400))
            #expect(try h.store.snapshot("items").status == .fresh)
            #expect(try await h.store.refreshIfNeeded(resource) == nil)
            let verdict = Freshness.evaluate(try h.store.snapshot("items").syncMark, policy: .http, now: h.clock.date)
            #expect(verdict.isStale == false)
            #expect(verdict.freshUntil == h.date(2_147_483_648))
            #expect(h.transport.requests.count == 1)
        }
    }

    @Test("an Age that is not a number is ignored (RFC 9111 §5.1)", arguments: ["abc", "-30", ""])
    func invalidAge(_ age: String) async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.http)
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["Cache-Control": "max-age=100", "Age": age]))
            try await h.store.refresh(resource)
            await h.clock.advance(by: .seconds(99))
            #expect(try await h.store.refreshIfNeeded(resource) == nil)
            await h.clock.advance(by: .seconds(2))
            #expect(try await h.store.refreshIfNeeded(resource) != nil)
        }
    }

    @Test("a Retry-After in the past means retry at once", arguments: ["past date", "zero"])
    func retryAfterInThePast(_ form: String) async throws {
        try await withScriptedStore { h in
            await h.clock.advance(by: .seconds(100))
            let retryAfter = form == "zero" ? "0" : imfDate(h.date(40))
            h.transport.on("/items", reply: .status(503, headers: ["Retry-After": retryAfter]), ItemsFixture.reply(["a"]))
            let summary = try await h.store.refresh(ItemsFixture.resource())
            #expect(summary.rows == 1)
            #expect(h.requestOffsets == [100, 100])
            #expect(try h.store.allRecords().map(\.kind) == [.fetchFailed, .fetched])
            #expect(h.clock.sleeperCount == 0)
        }
    }

    @Test("a Retry-After beyond maxRetryAfter ends the retries: one request, the error thrown, one fetchFailed",
          arguments: ["100000", "date a year away"])
    func retryAfterTooFar(_ form: String) async throws {
        try await withScriptedStore { h in
            let retryAfter = form == "100000" ? "100000" : imfDate(h.date(365 * 86_400))
            h.transport.on("/items", reply: .status(503, headers: ["Retry-After": retryAfter]), ItemsFixture.reply(["a"]))
            let error = try #require(await expectFetchError { try await h.store.refresh(ItemsFixture.resource()) })
            #expect(error.code == .httpStatus)
            #expect(error.status == 503)
            #expect(error.message.contains("no retry"), "message: \(error.message)")
            #expect(h.transport.requests.count == 1)
            #expect(h.clock.sleeperCount == 0)
            let records = try h.store.allRecords()
            #expect(records.map(\.kind) == [.fetchFailed])
            #expect(records.first?.fetchFailed?.attempt == 1)
            #expect(records.first?.fetchFailed?.status == 503)
        }
    }

    @Test("a Retry-After exactly at maxRetryAfter is honoured")
    func retryAfterAtLimit() async throws {
        try await withScriptedStore(.scripted(retry: .init(jitter: 0, maxRetryAfter: .seconds(300)))) { h in
            h.transport.on("/items", reply: .status(429, headers: ["Retry-After": "300"]), ItemsFixture.reply(["a"]))
            let refresh = Task { [store = h.store] in try await store.refresh(ItemsFixture.resource()) }
            await h.clock.waitForSleepers(1)
            await h.clock.advance(by: .seconds(300))
            _ = try await refresh.value
            #expect(h.requestOffsets == [0, 300])
        }
    }

    @Test("an unparseable Retry-After falls back to the computed backoff")
    func unparseableRetryAfter() async throws {
        try await withScriptedStore { h in
            h.transport.on("/items", reply: .status(503, headers: ["Retry-After": "soon"]), ItemsFixture.reply(["a"]))
            let refresh = Task { [store = h.store] in try await store.refresh(ItemsFixture.resource()) }
            await h.clock.waitForSleepers(1)
            await h.clock.advance(by: .seconds(1))
            _ = try await refresh.value
            #expect(h.requestOffsets == [0, 1])
        }
    }
}
