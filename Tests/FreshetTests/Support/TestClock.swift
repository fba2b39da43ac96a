import Foundation
import Freshet
import Synchronization

/// Deterministic time for tests: no test reads the wall clock or sleeps on it.
enum TestClock {
    /// 2000-01-01T00:00:00Z, the time every event of a test store is stamped with. It is
    /// earlier than any real `Date` header, so a real server's responses have no apparent age.
    static let now = Date(timeIntervalSince1970: 946_684_800)
    /// `now` as written by `freshet dump`.
    static let nowISO = "2000-01-01T00:00:00.000Z"
    /// A `now` closure for `Dependencies(now:transport:)` that always answers ``now``.
    static let fixed: @Sendable () -> Date = { now }
}

/// A wall clock that only moves when a test advances it.
final class ManualClock: Sendable {
    private let current: Mutex<Date>

    init(_ start: Date = TestClock.now) {
        current = Mutex(start)
    }

    var date: Date { current.withLock { $0 } }

    func advance(bySeconds seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    /// The closure to hand to `Dependencies(now:transport:)`.
    var now: @Sendable () -> Date { { self.date } }
}

/// The clock retry backoff sleeps on, for tests: a sleep returns at once (after a
/// cancellation check), moves the clock to its deadline and is remembered.
final class InstantSleepClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }

    private let state = Mutex<(now: Duration, sleeps: [Duration])>((.zero, []))

    var now: Instant { Instant(offset: state.withLock { $0.now }) }
    var minimumResolution: Duration { .zero }

    /// Every sleep asked for, in order.
    var sleeps: [Duration] { state.withLock { $0.sleeps } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        state.withLock { s in
            s.sleeps.append(deadline.offset - s.now)
            s.now = max(s.now, deadline.offset)
        }
    }
}

extension RandomSource {
    /// Always 0: backoff delays without jitter (1 s, 2 s, 4 s … with the default policy).
    static let zero = RandomSource { 0 }
}
