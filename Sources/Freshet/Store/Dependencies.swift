import Foundation
import FreshetHTTP
import Synchronization

/// Every source of non-determinism the store uses, passed in when it is built: the wall
/// clock for event timestamps and freshness, a clock to sleep on for retry backoff, random
/// numbers for jitter, and the network. ``live`` uses the system; tests pass the values from
/// `FreshetTesting` (a `TestClock`, a seeded random source and a `ScriptedTransport`).
public struct Dependencies: Sendable {
    /// The current time, read when an event is appended and when freshness is judged
    /// (never inside the fold).
    public var now: @Sendable () -> Date
    /// The clock retry backoff sleeps on.
    public var clock: any Clock<Duration>
    /// Random numbers for backoff jitter.
    public var random: RandomSource
    /// Sends HTTP requests.
    public var transport: any HTTPTransport

    public init(now: @escaping @Sendable () -> Date, clock: any Clock<Duration> = ContinuousClock(), random: RandomSource = .system, transport: any HTTPTransport) {
        self.now = now
        self.clock = clock
        self.random = random
        self.transport = transport
    }

    /// The system clock, `ContinuousClock`, the system random source and a
    /// `URLSessionTransport` with default settings.
    public static var live: Dependencies {
        Dependencies(now: { Date() }, clock: ContinuousClock(), random: .system, transport: URLSessionTransport())
    }
}

/// A source of random numbers, shareable between tasks.
public struct RandomSource: Sendable {
    private let nextValue: @Sendable () -> UInt64

    /// A source that calls `next` for each 64 random bits.
    public init(next: @escaping @Sendable () -> UInt64) { self.nextValue = next }

    /// 64 random bits.
    public func next() -> UInt64 { nextValue() }

    /// A uniformly distributed number in `0 ..< 1`.
    public func unitInterval() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// The system's generator.
    public static var system: RandomSource {
        RandomSource { var g = SystemRandomNumberGenerator(); return g.next() }
    }

    /// A reproducible SplitMix64 sequence: the same seed always gives the same numbers.
    public static func seeded(_ seed: UInt64) -> RandomSource {
        let state = Mutex<UInt64>(seed)
        return RandomSource {
            state.withLock { s in
                s &+= 0x9E37_79B9_7F4A_7C15
                var z = s
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return z ^ (z >> 31)
            }
        }
    }
}
