import Foundation

extension Snapshot.Status {
    /// The status of stored rows when no fetch is in flight: the last failure first, then
    /// freshness under `policy` at `now` (a never-fetched collection with rows is local-only,
    /// so fresh). The live store and `replay` both use it.
    static func stored(rows: [Row], mark: SyncMark?, policy: FreshnessPolicy, now: Date) -> Snapshot.Status {
        guard let mark else { return .empty }
        if mark.consecutiveFailures > 0, let error = mark.lastError {
            return .failed(error: error, lastSyncedAt: mark.validatedAt)
        }
        guard mark.validatedAt != nil else {
            if mark.invalidatedAt != nil { return .stale }
            return rows.isEmpty ? .empty : .fresh
        }
        return Freshness.evaluate(mark, policy: policy, now: now).isStale ? .stale : .fresh
    }
}
