import Freshet

/// Reproducible random numbers for tests: `Freshet`'s seeded SplitMix64 source under a name
/// that reads well in a test, plus a way to compute the values a store will draw.
///
/// ```swift
/// let random = SeededRandom.source(seed: 42)   // pass as Dependencies.random
/// let expected = SeededRandom.values(3, seed: 42)
/// #expect([random.next(), random.next(), random.next()] == expected)
/// ```
///
/// The same seed always gives the same sequence, on every platform; different seeds give
/// different sequences. Each call to ``source(seed:)`` starts a new sequence from the
/// beginning. The generator itself is `RandomSource.seeded(_:)`; this type adds nothing to it.
public enum SeededRandom {
    /// A new random source that yields the SplitMix64 sequence for `seed`, from its first
    /// value: the same as `RandomSource.seeded(seed)`.
    public static func source(seed: UInt64 = 0) -> RandomSource {
        RandomSource.seeded(seed)
    }

    /// The first `count` 64-bit values of the sequence for `seed`, in order: what a fresh
    /// ``source(seed:)`` returns from its first `count` calls to `next()`.
    ///
    /// A negative `count` is a programmer error and stops the program.
    public static func values(_ count: Int, seed: UInt64 = 0) -> [UInt64] {
        precondition(count >= 0, "SeededRandom.values needs a count of zero or more, got \(count)")
        let source = source(seed: seed)
        return (0..<count).map { _ in source.next() }
    }
}
