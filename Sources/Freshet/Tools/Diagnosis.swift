import Foundation

/// `freshet why`: why a collection shows what it shows — a one-line verdict and the records
/// behind it. The verdict is computed from the same SyncMark, ``Freshness/evaluate(_:policy:now:)``
/// and status rules a ``Snapshot`` uses, so the two never disagree.
public struct Diagnosis: Sendable {
    /// The situation, most pressing first (the order the snapshot status checks in).
    public enum Verdict: String, Sendable, Hashable {
        /// Garbage collection evicted it (an `evicted` record, docs/queries.md "Garbage
        /// collection"): no rows and no SyncMark are stored; the next observe refetches.
        case evicted
        /// No fetch and no local write of the collection is in the log.
        case neverFetched
        /// Written locally, never fetched: fresh by definition.
        case localOnly
        /// The last attempts failed while the server could not be reached (`cannotConnect`,
        /// `timedOut`, `connectionLost`): the stored rows are served while offline, fresh or
        /// stale as the summary's end says (a failure does not make rows stale).
        case offline
        /// The last attempts failed for another reason (an HTTP status, a bad body); the
        /// summary ends with the rows' freshness too.
        case failing
        /// Invalidated after its last fetch, and not fetched since.
        case invalidated
        /// The server said `no-store` or `no-cache`: every refresh goes to the network.
        case noStoreOrNoCache
        /// Stale because the policy's or the server's lifetime has run out (or `.always`).
        case staleByAge
        /// Fresh; the last validation was a 304 that renewed the stored rows.
        case renewedBy304
        /// Fresh since the last 200.
        case fresh
    }

    public let collection: String
    public let verdict: Verdict
    /// The verdict as one line a person reads, such as
    /// `stale by age: stale for 70 s (max-age=30, age 100 s); last validated by a 304 at … (LSN 20)`.
    public let summary: String
    /// Where the policy of a verdict came from.
    public enum PolicySource: Sendable, Hashable {
        /// Given by the caller (`freshet why --policy`), overriding any recorded one.
        case given
        /// Recorded by the refresh whose record has this LSN (with the retry settings it ran under).
        case recorded(lsn: LSN, retry: Configuration.RetryPolicy)
        /// Recorded by the refresh whose record had LSN `recordedAt`, which compaction removed;
        /// the checkpoint record at `lsn` kept it (docs/log-format.md §6.12, payload version 2).
        case checkpoint(lsn: LSN, recordedAt: LSN, retry: Configuration.RetryPolicy)
        /// The store's ``Configuration/defaultFreshness``: no refresh of the collection up to
        /// that point recorded a policy (a log written before policies were recorded, or
        /// compacted into a checkpoint written before checkpoints kept them).
        case storeDefault
    }

    /// The policy the verdict was judged under, and the time it was judged at.
    public let policy: FreshnessPolicy
    /// Where ``policy`` came from.
    public let policySource: PolicySource
    public let time: Date
    /// The snapshot status at that point (never `loading`/`refreshing`).
    public let status: Snapshot.Status
    public let freshness: FreshnessVerdict
    /// Unresolved mutations whose ops touch the collection: their rows mask the server's.
    public let maskingMutations: [PendingMutationInfo]
    /// The records that touched the collection, in LSN order (at most the last 50).
    public let timeline: [LogRecord]
    /// The SyncMark at that point.
    public let syncMark: SyncMark?
    /// The checkpoint the timeline starts after, when the log was compacted: records up to
    /// its `throughLSN` are not in the timeline.
    public var checkpoint: CheckpointInfo? = nil
    /// Unreadable records and missing LSNs met on the way (skipped, as ``Replay/problems``):
    /// `why --lsn 4` of a log holding 1, 2, 3, 5 judges at LSN 3 and names LSN 4 here.
    public var problems: [StoreProblem] = []
}
