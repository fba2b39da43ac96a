import Foundation

/// The projection a log replay rebuilt at one point of the log.
public struct Replay: Sendable {
    /// The last LSN folded (``LSN/zero`` when none was).
    public let lsn: LSN
    /// The timestamp of that record; statuses are judged at this time (or at the time asked
    /// for with ``ReplayPoint/time(_:)``, or this record's when it is later within the same
    /// millisecond).
    public let time: Date?
    /// One snapshot per selected collection, sorted by name: rows in order with the pending
    /// overlay applied, SyncMark, status (never `loading`/`refreshing`: a replay knows of no
    /// request in flight) and pending mutation IDs. Rows of a `no-store` response are not in
    /// the log, so such a collection replays with no rows. Each row's `json` is a `Data` of its
    /// own, indexed from 0 (read out of the replayed tables, not a slice of a decoded record).
    public let snapshots: [Snapshot]
    /// The unresolved mutations at that point, in LSN order (all collections).
    public let pending: [PendingMutationInfo]
    /// Unreadable records and missing LSNs met on the way (they were skipped).
    public let problems: [StoreProblem]
    /// How many records were folded.
    public let recordCount: Int
    /// The checkpoint the replay started from, when the log was compacted (the records
    /// folded are the ones after its `throughLSN`).
    public var checkpoint: CheckpointInfo? = nil
}
