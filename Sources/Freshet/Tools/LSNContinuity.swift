/// The one rule for which LSNs may be missing from a log, applied by `verify`, `replay`,
/// `why`, `dump`, `stats` and `import` alike (docs/operations.md, "Exit status"): LSNs run on
/// by one from LSN 1 — after a compaction from the latest checkpoint's `throughLSN` on, since
/// the records it covers are gone except the proposals it kept (docs/log-format.md §6.12), so
/// a gap at or before `throughLSN` is legitimate and never reported.
///
/// Feed it the log's LSNs in ascending order, and also the first LSN after the range asked
/// about (`through`): that is how a gap just before the bound is seen — `replay --to 4` of a
/// log holding 1, 2, 3, 5 is missing LSN 4.
struct LSNContinuity {
    /// The last LSN taken (at first the floor: the LSN before the range, or a checkpoint's
    /// `throughLSN`); the next one should be its successor.
    private(set) var last: LSN
    /// Gaps are reported only when they reach into `from ... through` (nil: to the end).
    var from: LSN
    var through: LSN?

    /// - Parameters:
    ///   - last: the LSN the log is known to hold before the range (``LSN/zero``: none), or
    ///     the latest checkpoint's `throughLSN` when that is later.
    init(after last: LSN, from: LSN = LSN(1), through: LSN? = nil) {
        self.last = last
        self.from = from
        self.through = through
    }

    /// The floor to start from: the LSN before the range (`before`, ``LSN/zero`` for none)
    /// or the latest checkpoint's `throughLSN`, whichever is later.
    static func floor(before: LSN, checkpointThrough: LSN?) -> LSN {
        max(before, checkpointThrough ?? .zero)
    }

    /// Takes the next LSN of the log. Returns the missing range before it (one
    /// ``StoreProblem`` naming the first missing LSN, `LSN 4 is missing: the log jumps from 3
    /// to 5`) when there is one that reaches into the range; nil otherwise. An LSN at or
    /// before ``last`` (a proposal a checkpoint kept, before its `throughLSN`) changes nothing.
    mutating func take(_ lsn: LSN) -> StoreProblem? {
        guard lsn > last else { return nil }
        let previous = last
        last = lsn
        guard lsn != previous.next else { return nil }
        let first = previous.next
        let end = LSN(lsn.rawValue - 1)
        guard end >= from, through.map({ first <= $0 }) ?? true else { return nil }
        let missing = first == end ? "LSN \(first) is missing" : "LSNs \(first)…\(end) are missing"
        return StoreProblem(database: "log", lsn: first, message: "\(missing): the log jumps from \(previous) to \(lsn)")
    }

    /// Takes the end of the log: `assigned` is the last LSN the store has assigned
    /// (``StoreDatabases/lastLSN(in:)``, read in the transaction that reached the end). LSNs
    /// after the last one taken, up to `assigned`, are missing records at the end of the log
    /// (the last records lost, `meta.lastLSN` still counting them): one ``StoreProblem``
    /// `LSN 30 is missing: the log ends at 29, the store assigned LSNs up to 30`, when it
    /// reaches into the range; nil otherwise.
    mutating func end(assigned: LSN) -> StoreProblem? {
        guard assigned > last else { return nil }
        let previous = last
        last = assigned
        let first = previous.next
        guard assigned >= from, through.map({ first <= $0 }) ?? true else { return nil }
        let missing = first == assigned ? "LSN \(first) is missing" : "LSNs \(first)…\(assigned) are missing"
        return StoreProblem(database: "log", lsn: first, message: "\(missing): the log ends at \(previous), the store assigned LSNs up to \(assigned)")
    }
}
