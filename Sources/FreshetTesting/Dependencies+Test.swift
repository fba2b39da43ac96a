import Freshet

extension Dependencies {
    /// Deterministic dependencies for a test: `clock` both for sleeping and (through
    /// ``TestClock/dateSource``) for `now`, a seeded random source, and `transport`.
    ///
    /// ```swift
    /// let clock = TestClock()
    /// let transport = ScriptedTransport(clock: clock)
    /// transport.on("/api/v2/pokemon?limit=20", reply: .json(#"{"results": []}"#))
    /// let dependencies = Dependencies.test(clock: clock, transport: transport, seed: 7)
    /// ```
    ///
    /// - Parameters:
    ///   - clock: The test clock; a fresh one at 2026-01-01T00:00:00Z by default. Keep a
    ///     reference to advance it.
    ///   - transport: The scripted network.
    ///   - seed: The seed of the random source (`RandomSource.seeded(seed)`, see
    ///     ``SeededRandom``); 0 by default.
    public static func test(clock: TestClock = TestClock(), transport: ScriptedTransport, seed: UInt64 = 0) -> Dependencies {
        Dependencies(now: clock.dateSource, clock: clock, random: SeededRandom.source(seed: seed), transport: transport)
    }
}
