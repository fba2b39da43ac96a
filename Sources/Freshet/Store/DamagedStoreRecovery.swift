import Foundation

/// What ``Store/recoverDamaged(directory:configuration:dependencies:)`` did: where the damaged
/// store went, and what it could carry over from its log.
public struct DamagedStoreRecovery: Sendable, Hashable {
    /// The damaged directory, moved aside and left as it was (for a bug report); the app may
    /// delete it.
    public var damagedCopy: URL
    /// The unresolved mutations found in the readable part of the old log, proposed again in
    /// the new store with the same mutation IDs (so the server's idempotency keys match), in
    /// the old log's LSN order.
    public var recoveredMutations: [MutationID]
    /// For each local-only collection (written by `localWrite`, never fetched) with rows: how
    /// many rows the new store got back, in one `localWrite`. Collections of fetched rows are
    /// not carried over (a cache: the next refresh fetches them).
    public var recoveredLocalRows: [String: Int]
    /// The last LSN the damaged store had assigned (its `meta.lastLSN`, or its highest readable
    /// record): the new log's first record, a `checkpoint` through this LSN, comes right after
    /// it, so LSNs never go backwards. ``LSN/zero`` when nothing could be read (the new log
    /// starts at 1).
    public var continuedAfter: LSN
    /// Log records that could be read and decoded (CRC-32C checked).
    public var readableRecords: Int
    /// Log records of the old store that are lost: found but failing to decode (CRC-32C,
    /// format), or missing — on a damaged page or node — from the LSNs the log should hold:
    /// those after its latest readable checkpoint (or from LSN 1), the proposals that
    /// checkpoint kept, up to ``continuedAfter``. A record with a damaged key counts once.
    public var unreadableRecords: Int
    /// Distinct pages of the old file found damaged (failing a check, or holding a damaged
    /// node or a reference out of place) among those recovery reads: the main tree, the `log`
    /// and `meta` databases, with their overflow pages.
    public var damagedPages: Int

    public init(damagedCopy: URL, recoveredMutations: [MutationID], recoveredLocalRows: [String: Int] = [:], continuedAfter: LSN = .zero,
                readableRecords: Int, unreadableRecords: Int, damagedPages: Int) {
        self.damagedCopy = damagedCopy
        self.recoveredMutations = recoveredMutations
        self.recoveredLocalRows = recoveredLocalRows
        self.continuedAfter = continuedAfter
        self.readableRecords = readableRecords
        self.unreadableRecords = unreadableRecords
        self.damagedPages = damagedPages
    }
}
