import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Testing
import TestSupport

@Suite("Retries with backoff on the test clock", .scaledTimeLimit(minutes: 1))
struct RetryTests {
    /// Advances the clock through `delays`, one sleeping retry at a time.
    static func advance(_ h: ScriptedStore, through delays: [Duration]) async {
        for delay in delays {
            await h.clock.waitForSleepers(1)
            await h.clock.advance(by: delay)
        }
    }

    @Test("503, 503, 200 with baseDelay 1 s and no jitter: requests at 0 s, 1 s, 3 s; fetchFailed 1, fetchFailed 2, fetched")
    func backoffInstants() async throws {
        try await withScriptedStore(.scripted(retry: .init(maxAttempts: 3, baseDelay: .seconds(1), jitter: 0))) { h in
            h.transport.on("/items", reply: .status(503), .status(503), ItemsFixture.reply(["a"]))
            let store = h.store
            let refresh = Task { try await store.refresh(ItemsFixture.resource()) }

            await h.clock.waitForSleepers(1)
            #expect(h.transport.requests.count == 1)
            #expect(h.clock.nextDeadline == KitClock.Instant(offset: .seconds(1)))
            await h.clock.advance(by: .seconds(1))
            await h.clock.waitForSleepers(1)
            #expect(h.transport.requests.count == 2)
            #expect(h.clock.nextDeadline == KitClock.Instant(offset: .seconds(3)))
            await h.clock.advance(by: .seconds(2))
            let summary = try await refresh.value

            #expect(summary == RefreshSummary(pages: 1, notModified: 0, rows: 1, lsn: 3))
            #expect(h.transport.requests.map(\.instant) == [0, 1, 3].map { KitClock.Instant(offset: .seconds($0)) })
            let records = try store.allRecords()
            #expect(records.map(\.kind) == [.fetchFailed, .fetchFailed, .fetched])
            #expect(records.compactMap(\.fetchFailed).map(\.attempt) == [1, 2])
            #expect(records.compactMap(\.fetchFailed).map(\.status) == [503, 503])
            #expect(records.compactMap(\.fetchFailed).map(\.reason) == ["httpStatus", "httpStatus"])
            #expect(records.map(\.timestamp) == [h.date(0), h.date(1), h.date(3)])
            let snapshot = try store.snapshot("items")
            #expect(snapshot.syncMark?.consecutiveFailures == 0)
            #expect(snapshot.syncMark?.lastError == nil)
            #expect(snapshot.rows == ItemsFixture.rows(["a"]))
        }
    }

    @Test("when every attempt fails the last error is thrown after maxAttempts requests, each one recorded")
    func attemptsExhausted() async throws {
        try await withScriptedStore(.scripted(retry: .init(maxAttempts: 3, baseDelay: .seconds(1), jitter: 0))) { h in
            h.transport.on("/items", reply: .status(503))
            let store = h.store
            let refresh = Task { try await store.refresh(ItemsFixture.resource()) }
            await Self.advance(h, through: [.seconds(1), .seconds(2)])
            let error = try #require(await expectFetchError(of: refresh))
            #expect(error.code == .httpStatus)
            #expect(error.status == 503)
            #expect(error.lsn == 3)
            #expect(h.requestOffsets == [0, 1, 3])
            #expect(h.clock.sleeperCount == 0)
            let records = try store.allRecords()
            #expect(records.compactMap(\.fetchFailed).map(\.attempt) == [1, 2, 3])
            let mark = try #require(try store.snapshot("items").syncMark)
            #expect(mark.consecutiveFailures == 3)
            #expect(mark.lastAttemptAt == h.date(3))
        }
    }

    @Test("delays double up to maxDelay: 1 s, 2 s, 3 s, 3 s")
    func maxDelayCap() async throws {
        try await withScriptedStore(.scripted(retry: .init(maxAttempts: 5, baseDelay: .seconds(1), maxDelay: .seconds(3), jitter: 0))) { h in
            h.transport.on("/items", reply: .status(500), .status(500), .status(500), .status(500), ItemsFixture.reply(["a"]))
            let store = h.store
            let refresh = Task { try await store.refresh(ItemsFixture.resource()) }
            await Self.advance(h, through: [.seconds(1), .seconds(2), .seconds(3), .seconds(3)])
            _ = try await refresh.value
            #expect(h.requestOffsets == [0, 1, 3, 6, 9])
        }
    }

    @Test("4xx other than 408 and 429 are not retried: exactly one request and at once a failed status", arguments: [400, 401, 403, 404, 410, 422])
    func clientErrorsNotRetried(_ status: Int) async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            h.transport.on("/items", reply: .held(gate, then: .status(status)))
            var observer = h.store.observe("items").makeAsyncIterator()
            #expect(try await observer.next()?.status == .empty)

            let store = h.store
            let refresh = Task { try await store.refresh(ItemsFixture.resource()) }
            #expect(try await observer.next()?.status == .loading)
            gate.release()
            let error = try #require(await expectFetchError(of: refresh))
            #expect(error.code == .httpStatus)
            #expect(error.status == status)
            #expect(error.lsn == 1)
            #expect(h.transport.requests.count == 1)
            #expect(h.clock.sleeperCount == 0)

            let failure = SyncMark.FailureInfo(reason: "httpStatus", status: status, message: error.message, lsn: 1)
            #expect(try store.snapshot("items").status == .failed(error: failure, lastSyncedAt: nil))
            let seen = try await collectSnapshots(&observer) { if case .failed = $0.status { true } else { false } }
            #expect(seen.last?.status == .failed(error: failure, lastSyncedAt: nil))
            #expect(seen.dropLast().allSatisfy { $0.status == .loading })
            #expect(try store.allRecords().map(\.kind) == [.fetchFailed])
        }
    }

    @Test("408, 429 and 5xx are retried", arguments: [408, 429, 500, 502, 503, 504])
    func retriedStatuses(_ status: Int) async throws {
        try await withScriptedStore { h in
            h.transport.on("/items", reply: .status(status), ItemsFixture.reply(["a"]))
            let store = h.store
            let refresh = Task { try await store.refresh(ItemsFixture.resource()) }
            await Self.advance(h, through: [.seconds(1)])
            _ = try await refresh.value
            #expect(h.requestOffsets == [0, 1])
            #expect(try store.allRecords().compactMap(\.fetchFailed).map(\.status) == [status])
        }
    }

    @Test("429 with Retry-After: 5 sends the second request at +5 s, not after the 1 s backoff")
    func retryAfterSeconds() async throws {
        try await withScriptedStore { h in
            h.transport.on("/items", reply: .status(429, headers: ["Retry-After": "5"]), ItemsFixture.reply(["a"]))
            let store = h.store
            let refresh = Task { try await store.refresh(ItemsFixture.resource()) }
            await h.clock.waitForSleepers(1)
            #expect(h.clock.nextDeadline == KitClock.Instant(offset: .seconds(5)))
            await h.clock.advance(by: .seconds(4))
            #expect(h.transport.requests.count == 1)
            await h.clock.advance(by: .seconds(1))
            _ = try await refresh.value
            #expect(h.requestOffsets == [0, 5])
        }
    }

    @Test("503 with Retry-After as an HTTP date 7 s ahead retries at +7 s")
    func retryAfterDate() async throws {
        try await withScriptedStore { h in
            h.transport.on("/items", reply: .status(503, headers: ["Retry-After": imfDate(h.date(7))]), ItemsFixture.reply(["a"]))
            let store = h.store
            let refresh = Task { try await store.refresh(ItemsFixture.resource()) }
            await Self.advance(h, through: [.seconds(7)])
            _ = try await refresh.value
            #expect(h.requestOffsets == [0, 7])
        }
    }

    /// `cannotConnect` is not retried: the fetch pauses (QueryStateTests).
    @Test("transport failures are retried and keep their codes", arguments: [
        (TransportError.Code.timedOut, FetchError.Code.timedOut),
        (.connectionLost, .connectionLost),
    ])
    func transportFailures(_ failure: TransportError.Code, _ code: FetchError.Code) async throws {
        try await withScriptedStore { h in
            h.transport.on("/items", reply: .fail(failure))
            let store = h.store
            let refresh = Task { try await store.refresh(ItemsFixture.resource()) }
            await Self.advance(h, through: [.seconds(1), .seconds(2)])
            let error = try #require(await expectFetchError(of: refresh))
            #expect(error.code == code)
            #expect(error.status == nil)
            #expect(h.requestOffsets == [0, 1, 3])
            #expect(try store.allRecords().compactMap(\.fetchFailed).map(\.reason) == Array(repeating: code.rawValue, count: 3))
        }
    }

    @Test("cancelling during the backoff sleep throws FetchError.cancelled and appends nothing after the first fetchFailed")
    func cancelDuringBackoff() async throws {
        try await withScriptedStore { h in
            h.transport.on("/items", reply: .status(503), ItemsFixture.reply(["a"]))
            let store = h.store
            let refresh = Task { try await store.refresh(ItemsFixture.resource()) }
            await h.clock.waitForSleepers(1)
            refresh.cancel()
            let error = try #require(await expectFetchError(of: refresh))
            #expect(error.code == .cancelled)
            #expect(h.clock.sleeperCount == 0)

            await h.clock.advance(by: .seconds(60))
            #expect(h.transport.requests.count == 1)
            let records = try store.allRecords()
            #expect(records.map(\.kind) == [.fetchFailed])
            #expect(records.first?.fetchFailed?.attempt == 1)
            #expect(store.lastLSN == 1)
            let snapshot = try store.snapshot("items")
            #expect(snapshot.rows == [])
            #expect(snapshot.syncMark?.consecutiveFailures == 1)
            #expect(store.refreshes.isFetching("items") == false)
        }
    }

    @Test("jitter from a seeded source: each delay is exactly the policy's for the drawn numbers, within [d·(1−jitter), d]",
          arguments: [1, 7, 42, 2026] as [UInt64])
    func seededJitter(_ seed: UInt64) async throws {
        let policy = Configuration.RetryPolicy(maxAttempts: 3, baseDelay: .seconds(1), maxDelay: .seconds(30), jitter: 0.5)
        try await withScriptedStore(.scripted(retry: policy), seed: seed) { h in
            h.transport.on("/items", reply: .status(503), .status(503), ItemsFixture.reply(["a"]))
            let draws = SeededRandom.values(2, seed: seed).map { Double($0 >> 11) * 0x1.0p-53 }
            let expected = [policy.delay(afterAttempt: 1, random: draws[0]), policy.delay(afterAttempt: 2, random: draws[1])]
            let store = h.store
            let refresh = Task { try await store.refresh(ItemsFixture.resource()) }
            var offsets: [Duration] = [.zero]
            for _ in expected {
                await h.clock.waitForSleepers(1)
                let deadline = try #require(h.clock.nextDeadline)
                offsets.append(deadline.offset)
                await h.clock.advance(to: deadline)
            }
            _ = try await refresh.value
            let delays = [offsets[1] - offsets[0], offsets[2] - offsets[1]]
            #expect(delays == expected)
            #expect(h.transport.requests.compactMap(\.instant?.offset) == offsets)
            for (attempt, delay) in delays.enumerated() {
                let full = Double(1 << attempt)
                #expect(secondsOf(delay) >= full * 0.5 && secondsOf(delay) <= full, "delay \(delay) after attempt \(attempt + 1)")
            }
        }
    }
}
