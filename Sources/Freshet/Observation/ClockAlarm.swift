import Foundation

/// One sleeping task on the store's injected clock (``Dependencies/clock``) that runs an
/// action at a date: the single timer behind ``StalenessTimer`` and ``GarbageCollector``.
enum ClockAlarm {
    /// Starts a task that sleeps `delay` seconds (negative: none) on `clock`, then runs `fire`;
    /// cancelling the task drops the alarm without running it.
    ///
    /// The deadline is fixed now, on the clock's own instant, before the task starts: a test
    /// clock advanced before the task begins to sleep still wakes it.
    static func start(on clock: any Clock<Duration>, after delay: TimeInterval, fire: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        let wait: Duration = .milliseconds(Int64((max(0, delay) * 1000).rounded(.up)))
        let sleep = sleeper(clock, for: wait)
        return Task {
            do {
                try await sleep()
            } catch {
                return // cancelled: a newer deadline replaced this one, or the store closed
            }
            fire()
        }
    }

    private static func sleeper<C: Clock>(_ clock: C, for delay: Duration) -> @Sendable () async throws -> Void where C.Duration == Duration {
        let deadline = clock.now.advanced(by: delay)
        return { try await clock.sleep(until: deadline, tolerance: nil) }
    }
}
