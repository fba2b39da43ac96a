import Foundation
import Synchronization

/// The bookkeeping and the one timer of garbage collection (docs/queries.md, "Garbage
/// collection"): when each collection was last used in this process, and one sleeping task
/// per store, on the store's injected clock (``Dependencies/clock``, so tests drive it with
/// `TestClock.advance`), that wakes at the earliest time a collection may be due and runs
/// a pass (``Store/collectGarbage()``). There is no timer per key.
///
/// A collection is *used* when an observation of it ends, when ``Store/snapshot(_:)`` reads
/// it, and when a commit touches it (this process's or another's, as this process learns of
/// it). A collection this process has not used since the store opened counts from the open.
/// Observed collections are not tracked here: a pass asks the ``ObserverHub``.
final class GarbageCollector: Sendable {
    private struct State: Sendable {
        var lastUsed: [String: Date] = [:]
        let openedAt: Date
        /// When the timer is set to wake, or, while `parked`, the deadline it gave up on.
        var scheduled: Date?
        var task: Task<Void, Never>?
        var stopped = false
        /// Wakes in a row before the date reached the deadline (a clock that answers every
        /// sleep at once); after two the timer parks until an earlier deadline comes.
        var earlyWakes = 0
        var parked = false
        /// Passes the timer ran to their end (for tests: ``waitForPasses(_:)``).
        var passes = 0
        /// Tests waiting for a pass count or a timer setting (``waitForPasses(_:)``,
        /// ``waitUntilScheduled(by:)``), by ID.
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiterID: UInt64 = 0

        /// The continuations of the waiters whose condition holds now, removed.
        mutating func satisfiedWaiters() -> [CheckedContinuation<Void, Never>] {
            let ready = waiters.filter { holds($0.value.condition) }
            for id in ready.keys { waiters[id] = nil }
            return ready.values.map(\.continuation)
        }

        func holds(_ condition: Waiter.Condition) -> Bool {
            switch condition {
            case .passes(let n): passes >= n
            case .scheduled(let date): !parked && scheduled.map { $0 <= date } ?? false
            }
        }
    }

    private struct Waiter: Sendable {
        enum Condition: Sendable {
            case passes(Int)
            case scheduled(Date)
        }
        var condition: Condition
        var continuation: CheckedContinuation<Void, Never>
    }

    private let state: Mutex<State>
    private let now: @Sendable () -> Date
    private let clock: any Clock<Duration>
    /// The gc time of a collection; nil: never evicted.
    private let gcTime: @Sendable (String) -> Duration?
    /// Runs a pass; given nothing, it reports the next deadline through ``schedule(_:)``.
    private let fire: @Sendable () -> Void

    init(now: @escaping @Sendable () -> Date, clock: any Clock<Duration>, gcTime: @escaping @Sendable (String) -> Duration?, fire: @escaping @Sendable () -> Void) {
        self.now = now
        self.clock = clock
        self.gcTime = gcTime
        self.fire = fire
        self.state = Mutex(State(openedAt: now()))
    }

    /// The collections used: each one's clock restarts now, and the timer is set for the
    /// earliest of them to come due, if that is before the time it is set for.
    func used(_ collections: some Collection<String>) {
        guard !collections.isEmpty else { return }
        let date = now()
        var earliest: Duration?
        for collection in collections {
            guard let gc = gcTime(collection) else { continue }
            earliest = min(earliest ?? gc, gc)
        }
        state.withLock { s in
            guard !s.stopped else { return }
            for collection in collections { s.lastUsed[collection] = date }
        }
        if let earliest { schedule(date.addingTimeInterval(earliest.timeInterval)) }
    }

    /// When each collection was last used (collections not in it: ``Usage/openedAt``).
    struct Usage {
        var lastUsed: [String: Date]
        var openedAt: Date
    }

    var usage: Usage {
        state.withLock { Usage(lastUsed: $0.lastUsed, openedAt: $0.openedAt) }
    }

    /// Forgets collections the store no longer holds (evicted, or gone with a sign-out), last
    /// used before `date` (a collection first used since the caller read the store stays).
    func forget(allBut present: Set<String>, usedBefore date: Date) {
        state.withLock { s in s.lastUsed = s.lastUsed.filter { present.contains($0.key) || $0.value >= date } }
    }

    /// Sets the timer for `date` when it is earlier than the time it is set for (or it is
    /// not set); nil changes nothing.
    func schedule(_ date: Date?) {
        guard let date else { return }
        let ready = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            guard !s.stopped else { return [] }
            if let scheduled = s.scheduled, scheduled <= date { return [] }
            s.scheduled = date
            s.parked = false
            s.earlyWakes = 0
            start(&s, for: date)
            return s.satisfiedWaiters()
        }
        for continuation in ready { continuation.resume() }
    }

    /// A pass the timer started has ended (evicting or not).
    func passEnded() {
        let ready = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.passes += 1
            return s.satisfiedWaiters()
        }
        for continuation in ready { continuation.resume() }
    }

    /// Suspends until the timer has run `count` passes to their end since the store opened
    /// (for tests, which then assert on what the pass did, with no wait on the wall clock).
    /// Returns early when the calling task is cancelled.
    func waitForPasses(_ count: Int) async {
        await wait(for: .passes(count))
    }

    /// Suspends until the timer is set for `date` or earlier (for tests: a commit's use is
    /// recorded on the writer's queue after the append returns, so a test waits for it before
    /// it moves the clock). Returns early when the calling task is cancelled.
    func waitUntilScheduled(by date: Date) async {
        await wait(for: .scheduled(date))
    }

    private func wait(for condition: Waiter.Condition) async {
        let id = state.withLock { s -> UInt64 in
            s.nextWaiterID += 1
            return s.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { s -> Bool in
                    if s.holds(condition) || s.stopped || Task.isCancelled { return true }
                    s.waiters[id] = Waiter(condition: condition, continuation: continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
        }
    }

    /// Stops the timer for good (the store is closing).
    func stop() {
        state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.stopped = true
            s.task?.cancel()
            s.task = nil
            s.lastUsed = [:]
            let waiters = s.waiters.values.map(\.continuation)
            s.waiters = [:]
            return waiters
        }.forEach { $0.resume() }
    }

    private func start(_ s: inout State, for date: Date) {
        s.task?.cancel()
        s.task = ClockAlarm.start(on: clock, after: date.timeIntervalSince(now())) { [weak self] in
            self?.wake(scheduledFor: date)
        }
    }

    private func wake(scheduledFor date: Date) {
        let run = state.withLock { s -> Bool in
            guard s.scheduled == date, !s.stopped, !s.parked else { return false }
            s.task = nil
            // A millisecond of slack: the sleep was rounded up to whole milliseconds, and
            // `Date` sums may differ in the last bit.
            if now() < date.addingTimeInterval(-0.001) {
                // The clock returned before the date got there (a test double answering every
                // sleep at once): try once more, then wait for an earlier deadline.
                s.earlyWakes += 1
                if s.earlyWakes >= 2 {
                    s.parked = true
                } else {
                    start(&s, for: date)
                }
                return false
            }
            s.scheduled = nil
            s.earlyWakes = 0
            return true
        }
        if run { fire() }
    }
}
