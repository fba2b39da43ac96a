import Foundation
import FreshetTesting
import Testing

@Suite("TestClock")
struct TestClockTests {
    typealias Instant = TestClock.Instant

    @Test("starts at 2026-01-01T00:00:00Z with offset zero")
    func start() {
        let clock = TestClock()
        #expect(clock.now == .zero)
        #expect(clock.date == Date(timeIntervalSince1970: 1_767_225_600))
        #expect(clock.dateSource() == Date(timeIntervalSince1970: 1_767_225_600))
        #expect(clock.minimumResolution == .zero)
        #expect(clock.sleeperCount == 0)
    }

    @Test("instants add, subtract and compare by their offset")
    func instants() {
        let one = Instant(offset: .seconds(1))
        let later = one.advanced(by: .milliseconds(1500))
        #expect(later == Instant(offset: .milliseconds(2500)))
        #expect(one.duration(to: later) == .milliseconds(1500))
        #expect(later.duration(to: one) == .milliseconds(-1500))
        #expect(one < later)
        #expect(one + .seconds(2) == Instant(offset: .seconds(3)))
        #expect(later - one == .milliseconds(1500))
    }

    @Test("the date and the date source move with the clock")
    func dateFollowsClock() async {
        let clock = TestClock(start: Date(timeIntervalSince1970: 1_000))
        let now = clock.dateSource
        await clock.advance(by: .seconds(90))
        #expect(clock.now == Instant(offset: .seconds(90)))
        #expect(clock.date == Date(timeIntervalSince1970: 1_090))
        #expect(now() == Date(timeIntervalSince1970: 1_090))
        await clock.advance(by: .milliseconds(250))
        #expect(now() == Date(timeIntervalSince1970: 1_090.25))
    }

    @Test("a sleep resumes exactly at its deadline, not before")
    func sleepResumesAtDeadline() async throws {
        let clock = TestClock()
        let sleeper = Task {
            try await clock.sleep(for: .seconds(3))
            return clock.now
        }
        await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(2))
        #expect(clock.sleeperCount == 1)
        #expect(clock.nextDeadline == Instant(offset: .seconds(3)))
        await clock.advance(by: .seconds(1))
        #expect(try await sleeper.value == Instant(offset: .seconds(3)))
        #expect(clock.sleeperCount == 0)
    }

    @Test("a deadline that is not after now returns at once")
    func pastDeadline() async throws {
        let clock = TestClock()
        await clock.advance(by: .seconds(5))
        try await clock.sleep(until: Instant(offset: .seconds(4)))
        try await clock.sleep(until: clock.now)
        try await clock.sleep(for: .zero)
        #expect(clock.now == Instant(offset: .seconds(5)))
        #expect(clock.sleeperCount == 0)
    }

    @Test("advance resumes sleepers in deadline order, ties in registration order, each at its deadline")
    func advanceInDeadlineOrder() async throws {
        let clock = TestClock()
        let log = EventLog<String>()
        var tasks: [Task<Void, any Error>] = []
        for (index, (name, seconds)) in [("c", 3), ("a", 1), ("b1", 2), ("b2", 2)].enumerated() {
            tasks.append(Task {
                try await clock.sleep(for: .seconds(seconds))
                log.append("\(name)@\(clock.now.offset)")
            })
            await clock.waitForSleepers(index + 1)
        }
        await clock.advance(by: .seconds(10))
        for task in tasks { try await task.value }
        #expect(log.all == ["a@1.0 seconds", "b1@2.0 seconds", "b2@2.0 seconds", "c@3.0 seconds"])
        #expect(clock.now == Instant(offset: .seconds(10)))
    }

    @Test("a sleep registered by a resumed task within the target is resumed by the same advance")
    func followUpSleepInSameAdvance() async throws {
        let clock = TestClock()
        let log = EventLog<Instant>()
        let task = Task {
            try await clock.sleep(for: .seconds(1))
            log.append(clock.now)
            try await clock.sleep(for: .seconds(2))
            log.append(clock.now)
            try await clock.sleep(for: .seconds(10))
            log.append(clock.now)
        }
        await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(5))
        #expect(log.all == [Instant(offset: .seconds(1)), Instant(offset: .seconds(3))])
        #expect(clock.now == Instant(offset: .seconds(5)))
        #expect(clock.sleeperCount == 1)
        #expect(clock.nextDeadline == Instant(offset: .seconds(13)))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(log.all.count == 2)
    }

    @Test("cancelling a sleeping task throws CancellationError and forgets the sleep")
    func cancellationWhileSleeping() async {
        let clock = TestClock()
        let task = Task { try await clock.sleep(for: .seconds(60)) }
        await clock.waitForSleepers(1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleeperCount == 0)
        #expect(clock.now == .zero)
    }

    @Test("a task cancelled before it sleeps throws CancellationError without sleeping")
    func cancellationBeforeSleeping() async {
        let clock = TestClock()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(60))
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("waitForSleepers returns once that many tasks sleep, and at once when they already do")
    func waitForSleepers() async throws {
        let clock = TestClock()
        let waiter = Task {
            await clock.waitForSleepers(2)
            return clock.sleeperCount
        }
        let first = Task { try await clock.sleep(for: .seconds(1)) }
        let second = Task { try await clock.sleep(for: .seconds(2)) }
        #expect(await waiter.value == 2)
        await clock.waitForSleepers(1)
        await clock.waitForSleepers(0)
        await clock.advance(by: .seconds(2))
        try await first.value
        try await second.value
        #expect(clock.sleeperCount == 0)
    }

    @Test("waitForSleepers returns when its own task is cancelled")
    func waitForSleepersCancelled() async {
        let clock = TestClock()
        let waiter = Task { await clock.waitForSleepers(1) }
        waiter.cancel()
        await waiter.value
        #expect(clock.sleeperCount == 0)
    }

    @Test("run advances from deadline to deadline until nothing sleeps")
    func runUntilIdle() async throws {
        let clock = TestClock()
        let task = Task {
            for _ in 0..<3 { try await clock.sleep(for: .seconds(2)) }
            return clock.now
        }
        await clock.waitForSleepers(1)
        #expect(await clock.run())
        #expect(try await task.value == Instant(offset: .seconds(6)))
        #expect(clock.now == Instant(offset: .seconds(6)))
    }

    @Test("run stops after maxSteps when a timer sleeps again every time it wakes")
    func runStopsAtLimit() async {
        let clock = TestClock()
        let timer = Task {
            while true { try await clock.sleep(for: .seconds(1)) }
        }
        await clock.waitForSleepers(1)
        #expect(await clock.run(maxSteps: 5) == false)
        #expect(clock.now == Instant(offset: .seconds(5)))
        #expect(clock.sleeperCount == 1)
        timer.cancel()
        await #expect(throws: CancellationError.self) { try await timer.value }
    }

    @Test("works through `any Clock<Duration>` as Dependencies holds it")
    func existentialClock() async throws {
        let clock = TestClock()
        let erased: any Clock<Duration> = clock
        let task = Task { try await erased.sleep(for: .milliseconds(1500)) }
        await clock.waitForSleepers(1)
        await clock.advance(by: .milliseconds(1500))
        try await task.value
        #expect(clock.now == Instant(offset: .milliseconds(1500)))
    }
}
