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
    /// Makes mutation IDs.
    public var uuid: @Sendable () -> UUID

    public init(now: @escaping @Sendable () -> Date, clock: any Clock<Duration> = ContinuousClock(), random: RandomSource = .system,
                transport: any HTTPTransport, uuid: @escaping @Sendable () -> UUID = { UUID() }) {
        self.now = now
        self.clock = clock
        self.random = random
        self.transport = transport
        self.uuid = uuid
    }

    /// UUIDs 00000000-0000-0000-0000-000000000001, …-000000000002, … in order: reproducible
    /// mutation IDs for tests.
    public static func incrementingUUIDs() -> @Sendable () -> UUID {
        let counter = Mutex<UInt64>(0)
        return {
            let n = counter.withLock { c -> UInt64 in
                c += 1
                return c
            }
            var bytes = [UInt8](repeating: 0, count: 16)
            for i in 0..<8 { bytes[15 - i] = UInt8((n >> (8 * UInt64(i))) & 0xFF) }
            return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                               bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        }
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
