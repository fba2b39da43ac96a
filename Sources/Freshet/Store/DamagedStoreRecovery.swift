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
    /// Log records that could be read and decoded.
    public var readableRecords: Int
    /// Log records that were found but failed to decode (CRC-32C, format).
    public var unreadableRecords: Int
    /// Pages of the old file that were damaged; the records on them are lost.
    public var damagedPages: Int

    public init(damagedCopy: URL, recoveredMutations: [MutationID], readableRecords: Int, unreadableRecords: Int, damagedPages: Int) {
        self.damagedCopy = damagedCopy
        self.recoveredMutations = recoveredMutations
        self.readableRecords = readableRecords
        self.unreadableRecords = unreadableRecords
        self.damagedPages = damagedPages
    }
}
