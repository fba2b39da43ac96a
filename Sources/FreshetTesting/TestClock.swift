import Foundation
import Synchronization

/// A clock that only moves when a test says so: the deterministic stand-in for
/// `ContinuousClock` in `Dependencies.clock`, in the style of Point-Free's swift-clocks.
///
/// ```swift
/// let clock = TestClock()                        // 2026-01-01T00:00:00Z, offset zero
/// let task = Task { try await clock.sleep(for: .seconds(2)) }
/// await clock.waitForSleepers(1)                 // the task is now sleeping
/// await clock.advance(by: .seconds(2))           // resumes it with `now` at +2 s
/// try await task.value
/// clock.date                                     // 2026-01-01T00:00:02Z
/// ```
///
/// Time is an ``Instant``: the `Duration` elapsed since ``start``. ``date`` is ``start`` plus
/// that elapsed time, and ``dateSource`` reads it, so passing both the clock and
/// ``dateSource`` to `Dependencies` (as `Dependencies.test(clock:transport:seed:)` does)
/// makes event timestamps and backoff sleeps move together.
///
/// Sleeping tasks are resumed only by ``advance(by:)``, ``advance(to:)`` and ``run(maxSteps:)``,
/// one at a time in deadline order (registration order between equal deadlines), each with
/// ``now`` equal to its own deadline. After each one the advancing task lets the resumed task's
/// follow-up work (registering its next sleep, sending a request) run before the next step:
///
/// 1. it waits until the resumed task has returned from `sleep`;
/// 2. it calls `Task.yield()` until the resumed task comes back to the clock (calls `sleep`
///    again, or sends a request through a `ScriptedTransport` made with this clock) and
///    ``yieldsPerStep`` yields in a row have passed with nothing happening on the clock (no
///    sleep registered, returned or cancelled, no request arriving);
/// 3. a resumed task that never comes back (it finishes, or goes on waiting elsewhere) is
///    given at most 40 × ``yieldsPerStep`` yields.
///
/// Yields are a generous allowance, not a guarantee: a follow-up that hops to another actor
/// or thread, or a machine so busy that the resumed task's thread is descheduled for the
/// whole allowance, can still be late. To synchronise on something exactly, wait for it
/// (``waitForSleepers(_:)``, or the scripted transport's `waitForRequests(_:)`) before
/// advancing.
///
/// The clock never reads the wall clock, and none of its methods sleep on it.
public final class TestClock: Clock, Sendable {
    /// The clock's unit of time: seconds and attoseconds.
    public typealias Duration = Swift.Duration

    /// The date at offset zero. Defaults to 2026-01-01T00:00:00Z.
    public let start: Date

    /// How many `Task.yield()` calls in a row, with nothing happening on the clock, an advance
    /// waits before its first step and after each resumed sleeper, to let resumed tasks run
    /// their follow-up work; 40 times this bounds the wait for a resumed task that does not
    /// come back to the clock. Defaults to 50; raise it when a follow-up takes several hops.
    public let yieldsPerStep: Int

    private let state = Mutex(State())

    /// A clock at offset zero whose ``date`` is `start`.
    ///
    /// - Parameters:
    ///   - start: The date ``date`` reports before any advance; defaults to
    ///     2026-01-01T00:00:00Z (Unix time 1 767 225 600 s).
    ///   - yieldsPerStep: See ``yieldsPerStep``. Must not be negative (a programmer error
    ///     that stops the program).
    public init(start: Date = Date(timeIntervalSince1970: 1_767_225_600), yieldsPerStep: Int = 50) {
        precondition(yieldsPerStep >= 0, "TestClock needs a yieldsPerStep of zero or more, got \(yieldsPerStep)")
        self.start = start
        self.yieldsPerStep = yieldsPerStep
    }

    /// The current instant: the time elapsed since ``start``. Changes only during
    /// ``advance(by:)``, ``advance(to:)`` and ``run(maxSteps:)``.
    public var now: Instant {
        state.withLock { $0.now }
    }

    /// The smallest step the clock can tell apart: zero, every `Duration` is exact.
    public var minimumResolution: Duration { .zero }

    /// The current wall-clock date in the test: ``start`` plus ``now``'s offset.
    public var date: Date {
        date(at: now)
    }

    /// The date of `instant`: ``start`` plus its offset (in seconds, at `Date`'s precision).
    public func date(at instant: Instant) -> Date {
        let (seconds, attoseconds) = instant.offset.components
        return start.addingTimeInterval(TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18)
    }

    /// A closure that returns ``date`` each time it is called: pass it as `Dependencies.now`
    /// so timestamps follow this clock.
    public var dateSource: @Sendable () -> Date {
        { [self] in date }
    }

    /// How many tasks are sleeping on this clock right now (registered and not yet resumed
    /// or cancelled).
    public var sleeperCount: Int {
        state.withLock { $0.sleepers.count }
    }

    /// The earliest deadline among the sleeping tasks, or `nil` when none is sleeping.
    public var nextDeadline: Instant? {
        state.withLock { $0.earliestSleeper.map { $0.deadline } }
    }

    /// Suspends until an advance moves the clock to `deadline`.
    ///
    /// Returns at once when `deadline` is not after ``now``. `tolerance` is ignored: the sleeper
    /// is resumed exactly at its deadline.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled before or while it
    ///   sleeps; the sleep is then forgotten and ``sleeperCount`` drops at once.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let task = Self.currentTaskKey()
        let id: UInt64? = state.withLock { state in
            guard deadline > state.now else {
                state.cameBack(task)
                return nil
            }
            return state.makeID()
        }
        guard let id else { return }
        let resumedByAdvance = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
                // Cancellation sets the task's flag before it runs the handler, so either the
                // handler finds this sleeper registered, or the flag is already set here.
                let registration = state.withLock { state -> Registration in
                    // The task is back on the clock: an advance settling after resuming it
                    // may stop waiting for it.
                    state.cameBack(task)
                    if Task.isCancelled { return .cancelled }
                    if deadline <= state.now { return .due }
                    state.sleepers.append(Sleeper(id: id, task: task, deadline: deadline, continuation: continuation))
                    state.activity &+= 1
                    return .registered(state.takeSatisfiedWaiters())
                }
                switch registration {
                case .cancelled:
                    continuation.resume(throwing: CancellationError())
                case .due:
                    continuation.resume(returning: false)
                case .registered(let waiters):
                    for waiter in waiters { waiter.resume() }
                }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Bool, any Error>? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                state.activity &+= 1
                return state.sleepers.remove(at: index).continuation
            }
            continuation?.resume(throwing: CancellationError())
        }
        // Resumed by an advance: tell it (if it is waiting already) that this task runs again.
        guard resumedByAdvance else { return }
        let advancer = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.activity &+= 1
            if let advancer = state.awaitingReturn.removeValue(forKey: id) { return advancer }
            state.returned.insert(id)
            return nil
        }
        advancer?.resume()
    }

    /// Moves the clock forward by `duration`, resuming every sleeper whose deadline falls
    /// within it; see ``advance(to:)``.
    ///
    /// A negative `duration` is a programmer error and stops the program.
    public func advance(by duration: Duration) async {
        precondition(duration >= .zero, "TestClock.advance(by: \(duration)): time only moves forward")
        await advanceChecked(to: now.advanced(by: duration))
    }

    /// Moves the clock forward to `target`, step by step.
    ///
    /// First the advancing task settles: it yields until ``yieldsPerStep`` yields in a row
    /// pass with nothing happening on the clock, so that tasks started just before can start
    /// sleeping. Then, while some sleeper's deadline is at or before `target`, it takes the
    /// earliest one (registration order between equal deadlines), sets ``now`` to that
    /// deadline, resumes it, waits until it has returned from `sleep`, and settles again. A
    /// sleeper registered by a resumed task with a deadline within `target` is therefore
    /// resumed by this same advance. Finally ``now`` becomes `target`.
    ///
    /// A `target` before ``now`` is a programmer error and stops the program.
    public func advance(to target: Instant) async {
        await advanceChecked(to: target)
    }

    /// Advances to the earliest deadline, again and again, until no task is sleeping on the
    /// clock, and yields first so that tasks started just before can start sleeping.
    ///
    /// A task that sleeps again each time it wakes (a timer) would keep this going forever,
    /// so it stops after `maxSteps` advances.
    ///
    /// - Returns: `true` when no sleeper is left, `false` when it stopped at `maxSteps`.
    @discardableResult
    public func run(maxSteps: Int = 10_000) async -> Bool {
        await settle()
        for _ in 0..<maxSteps {
            guard let deadline = nextDeadline else { return true }
            await advanceUnchecked(to: deadline)
        }
        return sleeperCount == 0
    }

    /// Suspends until at least `count` tasks are sleeping on this clock (``sleeperCount``
    /// is `count` or more); returns at once when they already are.
    ///
    /// Woken by the sleeps themselves as they register, never by polling. Returns early,
    /// without an error, when the calling task is cancelled.
    public func waitForSleepers(_ count: Int = 1) async {
        let id = state.withLock { $0.makeID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.sleepers.count >= count || Task.isCancelled { return true }
                    state.sleeperWaiters.append(SleeperWaiter(id: id, count: count, continuation: continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let index = state.sleeperWaiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleeperWaiters.remove(at: index).continuation
            }
            continuation?.resume()
        }
    }

    // MARK: - Advancing

    private func advanceChecked(to target: Instant) async {
        let current = now
        precondition(target >= current, "TestClock.advance(to: \(target)) is before now (\(current)): time only moves forward")
        await advanceUnchecked(to: target)
    }

    private func advanceUnchecked(to target: Instant) async {
        await settle()
        while true {
            let next = state.withLock { state -> Sleeper? in
                guard let earliest = state.earliestSleeper, earliest.deadline <= target,
                      let index = state.sleepers.firstIndex(where: { $0.id == earliest.id }) else {
                    if state.now < target { state.now = target }
                    return nil
                }
                state.sleepers.remove(at: index)
                if state.now < earliest.deadline { state.now = earliest.deadline }
                if let task = earliest.task { state.watched[task] = false }
                return earliest
            }
            guard let next else { return }
            next.continuation.resume(returning: true)
            await waitUntilReturned(next.id)
            await settle(watching: next.task)
        }
    }

    /// Suspends until the sleeper `id`, resumed by an advance, has returned from `sleep`.
    ///
    /// It yields and looks first, and suspends on a continuation only when that takes long:
    /// an advance that stays runnable is not woken by the sleeper's return, so it does not
    /// preempt the resumed task's thread just as that task starts its follow-up work.
    private func waitUntilReturned(_ id: UInt64) async {
        for _ in 0..<Self.returnSpinLimit {
            if state.withLock({ $0.returned.remove(id) != nil }) { return }
            await Task.yield()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let returned = state.withLock { state -> Bool in
                if state.returned.remove(id) != nil { return true }
                state.awaitingReturn[id] = continuation
                return false
            }
            if returned { continuation.resume() }
        }
    }

    /// Yields until ``yieldsPerStep`` yields in a row have passed with no activity on the
    /// clock (a sleep registered, returned or cancelled, or a request reaching a
    /// `ScriptedTransport` made with this clock), and, when `task` is given (the task an
    /// advance just resumed), until that task has come back: called `sleep` on this clock or
    /// sent a request through a `ScriptedTransport` made with it. Never more than
    /// `settleLimit` times ``yieldsPerStep`` yields: a resumed task that finishes, or goes on
    /// elsewhere, never comes back.
    private func settle(watching task: Int? = nil) async {
        var seen = state.withLock { $0.activity }
        var quiet = 0
        var total = 0
        defer {
            if let task { state.withLock { _ = $0.watched.removeValue(forKey: task) } }
        }
        while total < yieldsPerStep * Self.settleLimit {
            if quiet >= yieldsPerStep {
                guard let task, state.withLock({ $0.watched[task] == false }) else {
                    return
                }
            }
            await Task.yield()
            total += 1
            let activity = state.withLock { $0.activity }
            if activity == seen {
                quiet += 1
            } else {
                seen = activity
                quiet = 0
            }
        }
    }

    /// Records activity that a resumed task's follow-up work caused, such as a request
    /// reaching a scripted transport: an advance in progress keeps yielding a little longer,
    /// and stops waiting for the calling task to come back.
    func noteActivity() {
        let task = Self.currentTaskKey()
        state.withLock { state in
            state.activity &+= 1
            state.cameBack(task)
        }
    }

    /// A key for the calling task, the same for every call from one task while it lives.
    private static func currentTaskKey() -> Int? {
        withUnsafeCurrentTask { $0?.hashValue }
    }

    /// How many times a step yields, at most, looking for the resumed sleeper's return before
    /// it suspends to wait for it.
    private static let returnSpinLimit = 1_000

    /// The most a settle yields, as a multiple of ``yieldsPerStep``, however busy the clock is.
    private static let settleLimit = 40

    // MARK: - State

    private struct Sleeper {
        let id: UInt64
        /// The key of the sleeping task (see `currentTaskKey()`).
        let task: Int?
        let deadline: Instant
        /// Resumed with `true` by an advance, or throwing `CancellationError`.
        let continuation: CheckedContinuation<Bool, any Error>
    }

    private struct SleeperWaiter {
        let id: UInt64
        let count: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private enum Registration {
        case cancelled
        case due
        case registered([CheckedContinuation<Void, Never>])
    }

    private struct State {
        var now = Instant.zero
        var lastID: UInt64 = 0
        /// Sleeping tasks in registration order.
        var sleepers: [Sleeper] = []
        /// Tasks in `waitForSleepers`, in call order.
        var sleeperWaiters: [SleeperWaiter] = []
        /// Sleepers resumed by an advance that returned before the advance waited for them.
        var returned: Set<UInt64> = []
        /// Advances waiting for the sleeper they resumed to return from `sleep`.
        var awaitingReturn: [UInt64: CheckedContinuation<Void, Never>] = [:]
        /// Bumped by every registration, return and cancellation of a sleep, and by
        /// `noteActivity()`: how a settling advance sees that resumed tasks are still busy.
        var activity: UInt64 = 0
        /// Tasks an advance resumed and is settling after, by key: `true` once the task has
        /// come back (called `sleep`, or reached a scripted transport made with this clock).
        var watched: [Int: Bool] = [:]

        /// Notes that `task` called into the clock, if an advance is watching it.
        mutating func cameBack(_ task: Int?) {
            guard let task, watched[task] != nil else { return }
            watched[task] = true
            activity &+= 1
        }

        mutating func makeID() -> UInt64 {
            lastID += 1
            return lastID
        }

        /// The sleeper with the earliest deadline, the first registered among equals.
        var earliestSleeper: Sleeper? {
            var earliest: Sleeper?
            for sleeper in sleepers where earliest.map({ sleeper.deadline < $0.deadline }) ?? true {
                earliest = sleeper
            }
            return earliest
        }

        /// Removes and returns the `waitForSleepers` continuations whose count is now reached.
        mutating func takeSatisfiedWaiters() -> [CheckedContinuation<Void, Never>] {
            let count = sleepers.count
            let satisfied = sleeperWaiters.filter { $0.count <= count }.map(\.continuation)
            sleeperWaiters.removeAll { $0.count <= count }
            return satisfied
        }
    }
}
