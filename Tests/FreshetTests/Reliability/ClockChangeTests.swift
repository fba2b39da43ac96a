import Foundation
import Testing
@testable import Freshet

/// Issue 12 item 8: the device clock moving backwards or forwards. The fold orders by LSN and
/// never reads the clock; freshness judges a clock earlier than the last validation stale
/// (age unknown) and a later one by the elapsed time, so rows are never fresh for longer than
/// their lifetime by the clock, nor stale after the next successful fetch (docs/freshness.md,
/// "Clock changes").
@Suite("Clock changes")
struct ClockChangeTests {
    static let day: TimeInterval = 86_400

    /// A 200 for `collection` replacing it with `ids`.
    static func fetched(_ ids: [String], cacheControl: String? = nil) -> Event {
        .fetched(Event.Fetched(placement: .replace, rows: ids.map { row($0) }, response: ResponseInfo(url: "http://stub.invalid/items", status: 200, cacheControl: cacheControl)))
    }

    @Test("events stamped with a clock that jumps back a day and forward a year fold in LSN order, keep their stamps, and replay to the same state")
    func foldOrdersByLSN() async throws {
        let clock = ManualClock()
        try await withTemporaryStore(dependencies: .test(now: clock.now)) { store in
            try await store.localWrite("notes", [.upsert(row("a", "first")), .upsert(row("b"))])
            clock.advance(bySeconds: -Self.day)
            try await store.localWrite("notes", [.upsert(row("a", "second")), .delete(id: "b")])
            try await store.append(Self.fetched(["x", "y"]), to: "items")
            clock.advance(bySeconds: 366 * Self.day)
            try await store.append(Self.fetched(["z"]), to: "items")
            clock.advance(bySeconds: -400 * Self.day)
            try await store.localWrite("notes", [.upsert(row("c"))])

            var stamps: [String] = []
            try store.readLog { entry in
                if case .record(let r) = entry { stamps.append("\(r.lsn) \(LogRecord.iso8601(r.timestamp))") }
                return true
            }
            #expect(stamps == ["1 2000-01-01T00:00:00.000Z", "2 1999-12-31T00:00:00.000Z", "3 1999-12-31T00:00:00.000Z",
                               "4 2000-12-31T00:00:00.000Z", "5 1999-11-27T00:00:00.000Z"])
            #expect(try store.snapshot("notes").rows == [row("a", "second"), row("c")])
            #expect(try store.ids("items") == ["z"])
            #expect(try store.snapshot("items").syncMark?.lastLSN == LSN(4))
            let report = try store.verify()
            #expect(report.isOK)
            #expect(report.recordCount == 5)
        }
    }

    @Test("maxAge: a clock moved back before the fetch makes the rows stale with a reason, a fetch then makes them fresh for exactly their lifetime again")
    func maxAgeClockBack() async throws {
        let clock = ManualClock()
        try await withTemporaryStore(configuration: .test(freshness: .maxAge(.seconds(300))), dependencies: .test(now: clock.now)) { store in
            try await store.append(Self.fetched(["a"]), to: "items")
            clock.advance(bySeconds: 100)
            let fresh = store.freshness(of: "items", mark: try store.snapshot("items").syncMark)
            #expect(fresh == FreshnessVerdict(isStale: false, reason: "fresh for 3.3 min more (maxAge 5.0 min, age 100 s)", freshUntil: TestClock.now.addingTimeInterval(300)))

            // Back one hour: before the fetch. Not "fresh for 3,800 s more": stale, age unknown.
            clock.advance(bySeconds: -3700)
            let back = try store.snapshot("items")
            #expect(back.status == .stale)
            #expect(store.freshness(of: "items", mark: back.syncMark) == FreshnessVerdict(
                isStale: true,
                reason: "the clock reads 1999-12-31T23:00:00.000Z, before the last validation at 2000-01-01T00:00:00.000Z: it was moved back, so the age is unknown",
                freshUntil: nil))

            // The next fetch is stamped with the clock as it reads now: fresh for 300 s from there.
            try await store.append(Self.fetched(["a", "b"]), to: "items")
            #expect(try store.snapshot("items").status == .fresh)
            clock.advance(bySeconds: 299)
            #expect(try store.snapshot("items").status == .fresh)
            clock.advance(bySeconds: 1)
            #expect(try store.snapshot("items").status == .stale)
        }
    }

    @Test("maxAge: a clock moved forward a year makes the rows stale by age; moved back within the lifetime, they are fresh for what is left of it")
    func maxAgeClockForward() async throws {
        let clock = ManualClock()
        try await withTemporaryStore(configuration: .test(freshness: .maxAge(.seconds(300))), dependencies: .test(now: clock.now)) { store in
            try await store.append(Self.fetched(["a"]), to: "items")
            clock.advance(bySeconds: 365 * Self.day)
            let mark = try store.snapshot("items").syncMark
            #expect(store.freshness(of: "items", mark: mark) == FreshnessVerdict(
                isStale: true, reason: "stale for 365.0 d (maxAge 5.0 min, age 365.0 d)", freshUntil: TestClock.now.addingTimeInterval(300)))
            clock.advance(bySeconds: -365 * Self.day + 10)
            #expect(store.freshness(of: "items", mark: mark) == FreshnessVerdict(
                isStale: false, reason: "fresh for 4.8 min more (maxAge 5.0 min, age 10 s)", freshUntil: TestClock.now.addingTimeInterval(300)))
        }
    }

    @Test("http: a clock moved back is stale whatever max-age and Age say; .manual and .always do not look at the clock")
    func otherPolicies() throws {
        var mark = SyncMark()
        mark.validatedAt = TestClock.now
        mark.cacheControl = "max-age=86400"
        mark.age = "10"
        let back = TestClock.now.addingTimeInterval(-1)
        let http = Freshness.evaluate(mark, policy: .http, now: back)
        #expect(http.isStale)
        #expect(http.reason == "the clock reads 1999-12-31T23:59:59.000Z, before the last validation at 2000-01-01T00:00:00.000Z: it was moved back, so the age is unknown")
        #expect(Freshness.evaluate(mark, policy: .http, now: TestClock.now.addingTimeInterval(100)) == FreshnessVerdict(
            isStale: false, reason: "fresh for 24.0 h more (max-age=86400, age 110 s)", freshUntil: TestClock.now.addingTimeInterval(86_390)))
        #expect(Freshness.evaluate(mark, policy: .manual, now: back) == FreshnessVerdict(isStale: false, reason: "policy .manual: fresh until invalidated", freshUntil: nil))
        #expect(Freshness.evaluate(mark, policy: .always, now: back).reason == "policy .always: every refresh goes to the server")
    }

    @Test("why judged at a time before the last validation says stale by age because the clock was moved back; judged later it is fresh or stale by the elapsed time")
    func whyUnderClockChange() async throws {
        let clock = ManualClock()
        try await withTemporaryStore(configuration: .test(freshness: .maxAge(.seconds(300))), dependencies: .test(now: clock.now)) { store in
            try await store.append(Self.fetched(["a"]), to: "items")
            let back = try store.why("items", now: TestClock.now.addingTimeInterval(-60))
            #expect(back.verdict == .staleByAge)
            #expect(back.summary == "stale by age: the clock reads 1999-12-31T23:59:00.000Z, before the last validation at 2000-01-01T00:00:00.000Z: it was moved back, so the age is unknown; last validated by a 200 at 2000-01-01T00:00:00.000Z (LSN 1)")
            #expect(back.status == .stale)
            let later = try store.why("items", now: TestClock.now.addingTimeInterval(60))
            #expect(later.verdict == .fresh)
            #expect(later.summary == "fresh: fresh for 4.0 min more (maxAge 5.0 min, age 60 s); last validated by a 200 at 2000-01-01T00:00:00.000Z (LSN 1)")
            let past = try store.why("items", now: TestClock.now.addingTimeInterval(600))
            #expect(past.verdict == .staleByAge)
            #expect(past.summary == "stale by age: stale for 5.0 min (maxAge 5.0 min, age 10.0 min); last validated by a 200 at 2000-01-01T00:00:00.000Z (LSN 1)")
        }
    }
}
