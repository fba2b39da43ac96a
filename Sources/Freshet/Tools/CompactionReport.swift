/// What ``Store/compact(keeping:progress:)`` did.
public struct CompactionReport: Sendable, Hashable {
    /// The checkpoint written; nil when there was nothing to compact (every record since the
    /// last checkpoint is inside the window, or only checkpoints are older).
    public let checkpoint: CheckpointInfo?
    /// Records removed from the log (up to the checkpoint's `throughLSN`).
    public let removedRecords: Int
    /// Records up to `throughLSN` kept because their mutation was pending then.
    public let keptRecords: Int
    /// Entries of the materialized databases the checkpoint holds.
    public let entries: Int
    /// The first LSN of the kept window (the first record stamped after `now − window`),
    /// nil when no record is that recent.
    public let windowStart: LSN?
}

/// How far a compaction is, for a progress line: the records folded into the checkpoint's
/// state, then the records removed.
public struct CompactionProgress: Sendable, Hashable {
    public enum Phase: String, Sendable, Hashable {
        /// Folding the records the checkpoint will cover (read transactions; the store stays usable).
        case folding
        /// Removing the covered records (inside the one write transaction).
        case removing
        /// Everything is written; the write transaction commits next.
        case committing
    }

    public let phase: Phase
    /// Records done in this phase.
    public let done: Int
    /// Records this phase has in all (an estimate while folding: LSNs, gaps included).
    public let total: Int
}
