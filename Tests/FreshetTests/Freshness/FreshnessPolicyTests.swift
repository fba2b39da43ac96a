import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Testing
import TestSupport

@Suite("Freshness policies decide when refreshIfNeeded goes to the network", .scaledTimeLimit(minutes: 1))
struct FreshnessPolicyTests {
    /// Calls `refreshIfNeeded` and returns whether it made a refresh (non-nil summary).
    static func refreshed(_ h: ScriptedStore, _ resource: Resource) async throws -> Bool {
        try await h.store.refreshIfNeeded(resource) != nil
    }

    @Test(".always: every refreshIfNeeded sends a request, conditional once a validator is stored")
    func always() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.always)
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["ETag": #""a1""#, "Cache-Control": "max-age=3600"]), .status(304))
            let first = try await Self.refreshed(h, resource)
            #expect(first)
            #expect(try h.store.snapshot("items").status == .stale)
            #expect(try await Self.refreshed(h, resource))
            #expect(try await Self.refreshed(h, resource))
            #expect(h.transport.requests.count == 3)
            #expect(h.header("If-None-Match") == [nil, #""a1""#, #""a1""#])
            #expect(h.requestOffsets == [0, 0, 0])
            #expect(try h.store.allRecords().map(\.kind) == [.fetched, .notModified, .notModified])
        }
    }

    @Test(".maxAge(60 s): no request at 59 s, one at 61 s; exactly at 60 s the rows are stale")
    func maxAge() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.maxAge(.seconds(60)))
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]))
            let first = try await Self.refreshed(h, resource)
            #expect(first)
            #expect(try await Self.refreshed(h, resource) == false)

            await h.clock.advance(by: .seconds(59))
            #expect(try await Self.refreshed(h, resource) == false)
            #expect(try h.store.snapshot("items").status == .fresh)
            #expect(h.transport.requests.count == 1)

            await h.clock.advance(by: .seconds(1))
            #expect(try h.store.snapshot("items").status == .stale)
            await h.clock.advance(by: .seconds(1))
            #expect(try await Self.refreshed(h, resource))
            #expect(try await Self.refreshed(h, resource) == false)
            #expect(h.requestOffsets == [0, 61])
        }
    }

    @Test(".http with max-age=100 and Age: 30 is fresh at +69 s and stale at +71 s (RFC 9111 §4.2.3)")
    func httpMaxAgeWithAge() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.http)
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["Cache-Control": "max-age=100", "Age": "30"]))
            try await h.store.refresh(resource)

            await h.clock.advance(by: .seconds(69))
            #expect(try h.store.snapshot("items").status == .fresh)
            #expect(try await Self.refreshed(h, resource) == false)
            let mark = try h.store.snapshot("items").syncMark
            #expect(Freshness.evaluate(mark, policy: .http, now: h.clock.date)
                == FreshnessVerdict(isStale: false, reason: "fresh for 1 s more (max-age=100, age 99 s)", freshUntil: h.date(70)))

            await h.clock.advance(by: .seconds(2))
            #expect(try h.store.snapshot("items").status == .stale)
            #expect(try await Self.refreshed(h, resource))
            #expect(h.requestOffsets == [0, 71])
        }
    }

    @Test(".http counts the apparent age from the Date header (Date 40 s old, max-age=100: stale after 60 s)")
    func httpApparentAge() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.http)
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["Cache-Control": "max-age=100", "Date": imfDate(h.date(-40))]))
            try await h.store.refresh(resource)
            await h.clock.advance(by: .seconds(59))
            #expect(try await Self.refreshed(h, resource) == false)
            await h.clock.advance(by: .seconds(2))
            #expect(try await Self.refreshed(h, resource))
            #expect(h.requestOffsets == [0, 61])
        }
    }

    @Test(".http with no-cache revalidates on every refreshIfNeeded, conditionally")
    func noCache() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.http)
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["ETag": #""n1""#, "Cache-Control": "no-cache, max-age=3600"]), .status(304))
            #expect(try await Self.refreshed(h, resource))
            #expect(try h.store.snapshot("items").status == .stale)
            #expect(try await Self.refreshed(h, resource))
            #expect(try await Self.refreshed(h, resource))
            #expect(h.header("If-None-Match") == [nil, #""n1""#, #""n1""#])
            #expect(try h.store.allRecords().map(\.kind) == [.fetched, .notModified, .notModified])
            #expect(try h.store.snapshot("items").rows == ItemsFixture.rows(["a"]))
            let verdict = Freshness.evaluate(try h.store.snapshot("items").syncMark, policy: .http, now: h.clock.date)
            #expect(verdict.isStale)
            #expect(verdict.reason == "Cache-Control no-cache: revalidate every time (RFC 9111 §5.2.2.4)")
        }
    }

    @Test(".http with no-store: rows are shown, the log's fetched event withholds them, and a relaunch forgets them")
    func noStore() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.http)
            h.transport.on("/items", reply: ItemsFixture.reply(["a", "b"], headers: ["ETag": #""s1""#, "Cache-Control": "no-store"]))
            let summary = try await h.store.refresh(resource)
            #expect(summary == RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 1))

            let snapshot = try h.store.snapshot("items")
            #expect(snapshot.rows == ItemsFixture.rows(["a", "b"]))
            // Rows shown to users are indexed from 0, not slices of the response body.
            #expect(snapshot.rows.map(\.json.startIndex) == [0, 0])
            #expect(snapshot.syncMark?.noStore == true)
            #expect(snapshot.status == .stale)

            let records = try h.store.allRecords()
            #expect(records.map(\.kind) == [.fetched])
            let fetched = try #require(records.first?.fetched)
            #expect(fetched.rows == [])
            #expect(fetched.rowsWithheld)
            #expect(fetched.placement == .replace)

            // Nothing is kept, so nothing validates: the next request is unconditional.
            #expect(try await Self.refreshed(h, resource))
            #expect(h.transport.requests.count == 2)
            #expect(h.header("If-None-Match") == [nil, nil])
            #expect(h.header("If-Modified-Since") == [nil, nil])

            let store = try h.reopen()
            let reopened = try store.snapshot("items")
            #expect(reopened.rows == [])
            #expect(reopened.status == .stale)

            let dump = h.dumpJSON()
            #expect(dump.status == 0)
            let objects = try dump.stdout.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
            #expect(objects.map { $0["rowsWithheld"] as? Bool } == [true, true])
            #expect(objects.map { $0["rowIDs"] as? [String] } == [[], []])
        }
    }

    @Test(".manual: no request however old the rows, until invalidate; then exactly one")
    func manual() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.manual)
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["Cache-Control": "max-age=0"]), ItemsFixture.reply(["a", "b"]))
            // Never fetched: stale under every policy.
            #expect(try await Self.refreshed(h, resource))
            await h.clock.advance(by: .seconds(365 * 86_400))
            #expect(try await Self.refreshed(h, resource) == false)
            #expect(try h.store.snapshot("items").status == .fresh)
            #expect(h.transport.requests.count == 1)

            try await h.store.invalidate("items", reason: "pulled to refresh")
            #expect(try h.store.snapshot("items").status == .stale)
            #expect(h.transport.requests.count == 1)
            #expect(try await Self.refreshed(h, resource))
            #expect(try await Self.refreshed(h, resource) == false)
            #expect(h.transport.requests.count == 2)
            #expect(try h.store.snapshot("items").rows == ItemsFixture.rows(["a", "b"]))
            #expect(try h.store.snapshot("items").syncMark?.invalidatedAt == nil)
            #expect(try h.store.allRecords().map(\.kind) == [.fetched, .invalidated, .fetched])
        }
    }

    @Test(".http with Expires and Date: the lifetime is Expires − Date (120 s: fresh at 119 s, stale at 121 s)")
    func expires() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.http)
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["Date": imfDate(h.date(0)), "Expires": imfDate(h.date(120))]))
            try await h.store.refresh(resource)
            await h.clock.advance(by: .seconds(119))
            #expect(try await Self.refreshed(h, resource) == false)
            #expect(Freshness.evaluate(try h.store.snapshot("items").syncMark, policy: .http, now: h.clock.date).freshUntil == h.date(120))
            await h.clock.advance(by: .seconds(2))
            #expect(try await Self.refreshed(h, resource))
            #expect(h.requestOffsets == [0, 121])
        }
    }

    @Test(".http: max-age wins over Expires (RFC 9111 §5.3)")
    func maxAgeBeatsExpires() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.http)
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["Cache-Control": "max-age=10", "Date": imfDate(h.date(0)), "Expires": imfDate(h.date(1000))]))
            try await h.store.refresh(resource)
            await h.clock.advance(by: .seconds(11))
            #expect(try await Self.refreshed(h, resource))
        }
    }

    @Test(".http with an invalid Expires (\"0\") is already stale (RFC 9111 §5.3)")
    func invalidExpires() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.http)
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["Date": imfDate(h.date(0)), "Expires": "0"]))
            try await h.store.refresh(resource)
            #expect(try h.store.snapshot("items").status == .stale)
            #expect(try await Self.refreshed(h, resource))
            #expect(h.requestOffsets == [0, 0])
        }
    }

    @Test(".http heuristic: 10% of the time since Last-Modified (1000 s old → fresh for 100 s)")
    func heuristic() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.http)
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["Date": imfDate(h.date(0)), "Last-Modified": imfDate(h.date(-1000))]))
            try await h.store.refresh(resource)
            await h.clock.advance(by: .seconds(99))
            #expect(try await Self.refreshed(h, resource) == false)
            #expect(Freshness.evaluate(try h.store.snapshot("items").syncMark, policy: .http, now: h.clock.date).freshUntil == h.date(100))
            await h.clock.advance(by: .seconds(2))
            #expect(try await Self.refreshed(h, resource))
            #expect(h.requestOffsets == [0, 101])
            // The second request revalidates with the Last-Modified it was given.
            #expect(h.header("If-Modified-Since") == [nil, imfDate(h.date(-1000))])
        }
    }

    @Test(".http heuristic is capped at one day (Last-Modified 100 days old)")
    func heuristicCap() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.http)
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["Date": imfDate(h.date(0)), "Last-Modified": imfDate(h.date(-100 * 86_400))]))
            try await h.store.refresh(resource)
            await h.clock.advance(by: .seconds(86_399))
            #expect(try await Self.refreshed(h, resource) == false)
            await h.clock.advance(by: .seconds(2))
            #expect(try await Self.refreshed(h, resource))
            #expect(h.requestOffsets == [0, 86_401])
        }
    }

    @Test(".http with no freshness information at all is stale at once")
    func noFreshnessInformation() async throws {
        try await withScriptedStore { h in
            let resource = ItemsFixture.resource(.http)
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]))
            try await h.store.refresh(resource)
            #expect(try h.store.snapshot("items").status == .stale)
            #expect(try await Self.refreshed(h, resource))
        }
    }

    @Test("a resource without a policy uses Configuration.defaultFreshness")
    func defaultPolicy() async throws {
        try await withScriptedStore(.scripted(freshness: .maxAge(.seconds(30)))) { h in
            let resource = ItemsFixture.resource(nil)
            h.transport.on("/items", reply: ItemsFixture.reply(["a"], headers: ["Cache-Control": "max-age=3600"]))
            try await h.store.refresh(resource)
            #expect(h.store.freshnessPolicy(for: "items") == .maxAge(.seconds(30)))
            await h.clock.advance(by: .seconds(29))
            #expect(try await Self.refreshed(h, resource) == false)
            await h.clock.advance(by: .seconds(2))
            #expect(try await Self.refreshed(h, resource))
        }
    }
}
