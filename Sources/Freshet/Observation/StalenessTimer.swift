import Foundation
import Synchronization

/// One timer per store that wakes when the earliest observed collection reaches its
/// ``QueryState/staleAt``, on the store's injected clock (``Dependencies/clock``, so tests
/// drive it with `TestClock.advance`), and reports the collections that became stale.
///
/// The hub tells it each observed collection's `staleAt` after every delivery; it keeps one
/// sleeping task for the earliest, and replaces it only when the earliest changes.
final class StalenessTimer: Sendable {
    private struct State: Sendable {
        var due: [String: Date] = [:]
        var scheduled: Date?
        var task: Task<Void, Never>?
        var stopped = false
        /// Wakes in a row that found nothing due (a clock that returns before the date
        /// reaches the deadline); after two, the timer waits for the next ``update``.
        var earlyWakes = 0
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> Date
    private let clock: any Clock<Duration>
    private let fire: @Sendable ([String]) -> Void

    /// `fire` gets the collections whose `staleAt` has come, sorted, once per `staleAt`.
    init(now: @escaping @Sendable () -> Date, clock: any Clock<Duration>, fire: @escaping @Sendable ([String]) -> Void) {
        self.now = now
        self.clock = clock
        self.fire = fire
    }

    /// Sets (or with nil, clears) when `collection` becomes stale.
    func update(_ collection: String, staleAt: Date?) {
        state.withLock { s in
            guard s.due[collection] != staleAt else { return }
            s.due[collection] = staleAt
            if s.earlyWakes >= 2 { s.scheduled = nil } // waiting for an update: schedule again
            s.earlyWakes = 0
            reschedule(&s)
        }
    }

    /// Stops the timer for good (the store is closing).
    func stop() {
        state.withLock { s in
            s.stopped = true
            s.task?.cancel()
            s.task = nil
            s.due = [:]
        }
    }

    private func reschedule(_ s: inout State) {
        let earliest = s.due.values.min()
        guard !s.stopped, earliest != s.scheduled else { return }
        s.task?.cancel()
        s.scheduled = earliest
        guard let earliest else {
            s.task = nil
            return
        }
        s.task = ClockAlarm.start(on: clock, after: earliest.timeIntervalSince(now())) { [weak self] in
            self?.wake(scheduledFor: earliest)
        }
    }

    private func wake(scheduledFor date: Date) {
        let due = state.withLock { s -> [String] in
            guard s.scheduled == date, !s.stopped else { return [] }
            let current = now()
            let due = s.due.filter { $0.value <= current }.map(\.key).sorted()
            for collection in due { s.due[collection] = nil }
            s.earlyWakes = due.isEmpty ? s.earlyWakes + 1 : 0
            s.task = nil
            // A clock that does not move the date (a test double answering every sleep at
            // once) would spin here: after two early wakes, wait for the next update.
            guard s.earlyWakes < 2 else { return [] }
            s.scheduled = nil
            reschedule(&s)
            return due
        }
        if !due.isEmpty { fire(due) }
    }
}
