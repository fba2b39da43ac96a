import Foundation

/// What `freshet stats` reports about a store. Sizes are in bytes, times are record
/// timestamps, counts are records or rows.
public struct StoreStatistics: Sendable {
    /// Facts about one collection.
    public struct Collection: Sendable, Hashable {
        public var name: String
        /// Log records whose collection is this one.
        public var records: Int
        /// Bytes of those records as stored (the log's share of the collection).
        public var logBytes: Int
        /// Rows materialized now, and their stored bytes (ID and JSON).
        public var rows: Int
        public var rowBytes: Int
    }

    /// Records in the log, readable or not.
    public var records = 0
    /// Records that do not decode (checksum, unknown kind, truncation).
    public var unreadableRecords = 0
    /// LSNs missing from the log where none may be (the rule `verify` applies: after the
    /// latest checkpoint's `throughLSN`), one problem per gap: `LSN 4 is missing: the log jumps
    /// from 3 to 5`.
    public var missingRecords: [StoreProblem] = []
    /// Records by event kind name (`fetched`, `notModified`, …).
    public var recordsByKind: [String: Int] = [:]
    /// Bytes of all records as stored (keys excluded).
    public var logBytes = 0
    /// The oldest and newest readable records.
    public var oldest: (lsn: LSN, time: Date)?
    public var newest: (lsn: LSN, time: Date)?
    /// Collections sorted by stored bytes (log plus rows), largest first.
    public var collections: [Collection] = []
    /// Unresolved optimistic mutations.
    public var pendingMutations = 0
    /// Size of `data.mdb` on disk.
    public var fileBytes = 0
    /// The LMDB memory map size: the largest the file may grow to.
    public var mapBytes = 0
    public var pageSize = 0
    /// The store format version (`meta.formatVersion`, docs/log-format.md §9): 2, or 1 for a
    /// store no Freshet of format 2 has opened read-write yet.
    public var storeFormat = 0
    /// Pages LMDB counts as used (`me_last_pgno + 1`: every page some transaction allocated)
    /// and pages on LMDB's free list (reused by later writes). The file may end before the
    /// used pages, so `usedPages × pageSize` can exceed ``fileBytes``: a page allocated and
    /// freed in the same transaction is counted but never written (docs/reliability.md,
    /// "Damaged files").
    public var usedPages = 0
    public var freePages = 0
    /// Reader slots holding a read transaction now, this tool's own excluded, and the size of
    /// the reader table.
    public var activeReaders = 0
    public var readerSlots = 0
    /// Entries per named database (`log`, `rows`, …).
    public var entriesByDatabase: [String: Int] = [:]
}
