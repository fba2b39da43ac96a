/// What `verify` found: how much it checked and every problem, in the order found (log
/// problems first, then the materialized databases in `StoreDatabases.names` order).
public struct VerifyReport: Sendable {
    /// Records that decoded and were folded.
    public let recordCount: Int
    /// The last LSN read from the log.
    public let lastLSN: LSN
    /// Entries compared in the materialized databases (stored and replayed, counted once per key).
    public let comparedEntries: Int
    public let problems: [StoreProblem]
    /// True when nothing was found wrong.
    public var isOK: Bool { problems.isEmpty }
}
