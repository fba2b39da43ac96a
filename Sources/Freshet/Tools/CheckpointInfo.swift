import Foundation

/// Where a compacted log's history starts: the latest `checkpoint` record (docs/log-format.md
/// §6.12). Replay, verify and why fold from its state; LSNs up to ``throughLSN`` cannot be
/// visited (``ToolError/beforeCheckpoint``).
public struct CheckpointInfo: Sendable, Hashable, CustomStringConvertible {
    /// The LSN of the checkpoint record itself.
    public let lsn: LSN
    /// The last LSN whose effects the checkpoint's state holds.
    public let throughLSN: LSN
    /// The timestamp of the record at ``throughLSN``.
    public let throughTime: Date
    /// When the checkpoint was written (its record's timestamp).
    public let writtenAt: Date
    /// Records up to ``throughLSN`` still in the log: proposals of mutations pending then.
    public let keptLSNs: [LSN]
    /// Records up to ``throughLSN`` that compactions removed (this one's count).
    public let removedCount: Int
    /// Whether the checkpoint keeps each collection's last read policy (payload version 2,
    /// docs/log-format.md §6.12); false for one written before policies were kept, after
    /// which `why` cannot know the policy of a collection not refreshed since.
    public var keepsPolicies = false

    public init(lsn: LSN, throughLSN: LSN, throughTime: Date, writtenAt: Date, keptLSNs: [LSN], removedCount: Int) {
        self.lsn = lsn
        self.throughLSN = throughLSN
        self.throughTime = throughTime
        self.writtenAt = writtenAt
        self.keptLSNs = keptLSNs
        self.removedCount = removedCount
    }

    /// `checkpoint at LSN 120 (state through LSN 100 at 2026-…Z)`.
    public var description: String {
        "checkpoint at LSN \(lsn) (state through LSN \(throughLSN) at \(LogRecord.iso8601(throughTime)))"
    }
}
