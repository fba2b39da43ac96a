import Foundation

extension Event {
    /// The folded state of every collection through one LSN, written by compaction
    /// (``Store/compact(keeping:progress:)``; docs/log-format.md §6.11).
    ///
    /// Holds, byte for byte, the entries of the materialized databases `rows`, `marks`,
    /// `pending`, `mutations`, `idMap` and `confirmed` as the fold left them after record
    /// ``throughLSN`` (`rowIndex` is derived from `rows`). Log records with an LSN up to
    /// ``throughLSN`` may be missing after it, except those in ``keptLSNs`` (the proposals
    /// of mutations still pending at ``throughLSN``, which the fold and the pending overlay
    /// read back). Replay starts from the latest checkpoint and folds the records after
    /// ``throughLSN``. The checkpoint record itself gets a new LSN after every record it covers.
    public struct Checkpoint: Sendable, Hashable {
        /// A materialized database a checkpoint entry belongs to (its payload code).
        public enum Table: UInt8, Sendable, Hashable, CaseIterable {
            case rows = 1
            case marks = 2
            case pending = 3
            case mutations = 4
            case idMap = 5
            case confirmed = 6

            /// The LMDB database name (docs/log-format.md §1).
            public var databaseName: String {
                switch self {
                case .rows: "rows"
                case .marks: "marks"
                case .pending: "pending"
                case .mutations: "mutations"
                case .idMap: "idMap"
                case .confirmed: "confirmed"
                }
            }
        }

        /// One key/value pair of a materialized database, as stored.
        public struct Entry: Sendable, Hashable {
            public var table: Table
            public var key: [UInt8]
            public var value: [UInt8]

            public init(table: Table, key: [UInt8], value: [UInt8]) {
                self.table = table
                self.key = key
                self.value = value
            }
        }

        /// The last ``ReadPolicy`` one collection's refreshes recorded up to ``throughLSN``, and
        /// the LSN of the record that carried it (which compaction may have removed).
        public struct RecordedPolicy: Sendable, Hashable {
            public var collection: String
            public var lsn: LSN
            public var policy: ReadPolicy

            public init(collection: String, lsn: LSN, policy: ReadPolicy) {
                self.collection = collection
                self.lsn = lsn
                self.policy = policy
            }
        }

        /// The payload version this code writes: 2 carries ``policies``; 1 (no version
        /// field) was written before policies were kept (docs/log-format.md §6.12).
        public static let payloadVersion = 2

        /// The last LSN whose effects the state holds.
        public var throughLSN: LSN
        /// The timestamp of the record at ``throughLSN`` (statuses are judged at it when a
        /// replay stops there).
        public var throughTime: Date
        /// The LSNs up to ``throughLSN`` whose records compaction kept, ascending: the
        /// proposals of mutations pending at ``throughLSN``.
        public var keptLSNs: [LSN]
        /// How many records up to ``throughLSN`` were in the log before compaction removed
        /// them (for people; replay does not use it).
        public var removedCount: Int
        /// The entries, grouped by table in ``Table`` order and sorted by key within one.
        public var entries: [Entry]
        /// Each collection's last recorded read policy at ``throughLSN``, sorted by collection:
        /// `freshet why` judges a compacted collection under it when the record that carried
        /// it was removed. Nil for a version 1 checkpoint (written before policies were kept:
        /// unknown), empty when no refresh up to ``throughLSN`` recorded one.
        public var policies: [RecordedPolicy]?

        public init(throughLSN: LSN, throughTime: Date, keptLSNs: [LSN], removedCount: Int, entries: [Entry], policies: [RecordedPolicy]? = nil) {
            self.throughLSN = throughLSN
            self.throughTime = throughTime
            self.keptLSNs = keptLSNs
            self.removedCount = removedCount
            self.entries = entries
            self.policies = policies
        }
    }
}

// MARK: Payload encoding (docs/log-format.md §6.11)

extension ByteWriter {
    mutating func encode(_ c: Event.Checkpoint) {
        field(1, uint: c.throughLSN.rawValue)
        field(2, time: c.throughTime)
        for lsn in c.keptLSNs { field(3, uint: lsn.rawValue) }
        field(4, uint: UInt64(clamping: c.removedCount))
        for entry in c.entries {
            field(5) { m in
                m.field(1, uint: UInt64(entry.table.rawValue))
                m.field(2, bytes: entry.key)
                m.field(3, bytes: entry.value)
            }
        }
        if let policies = c.policies {
            field(6, uint: UInt64(Event.Checkpoint.payloadVersion))
            for p in policies {
                field(7) { m in
                    m.field(1, string: p.collection)
                    m.field(2, uint: p.lsn.rawValue)
                    m.field(3) { p.policy.encode(into: &$0) }
                }
            }
        }
    }
}

extension Event.Checkpoint {
    static func decode(_ reader: ByteReader) throws -> Event.Checkpoint {
        var r = reader
        var through: LSN?
        var time = Date(timeIntervalSince1970: 0)
        var kept: [LSN] = []
        var removed = 0
        var entries: [Entry] = []
        var version: UInt64 = 1
        var policies: [RecordedPolicy] = []
        try r.fields { tag, v in
            switch tag {
            case 1: through = LSN(try v.uint())
            case 2: time = try v.time()
            case 3: kept.append(LSN(try v.uint()))
            case 4: removed = Int(clamping: try v.uint())
            case 5:
                var m = v.message
                var code: UInt64 = 0
                var key: [UInt8]?
                var value: [UInt8] = []
                try m.fields { t, x in
                    switch t {
                    case 1: code = try x.uint()
                    case 2: key = x.bytes
                    case 3: value = x.bytes
                    default: break
                    }
                }
                guard let table = Table(rawValue: UInt8(clamping: code)), code <= UInt64(UInt8.max) else {
                    throw FormatError(reason: "checkpoint entry names unknown database \(code)")
                }
                guard let key, !key.isEmpty else { throw FormatError(reason: "checkpoint entry has no key") }
                entries.append(Entry(table: table, key: key, value: value))
            case 6: version = try v.uint()
            case 7:
                var m = v.message
                var collection: String?
                var lsn: UInt64 = 0
                var policy: ReadPolicy?
                try m.fields { t, x in
                    switch t {
                    case 1: collection = try x.string()
                    case 2: lsn = try x.uint()
                    case 3: policy = try ReadPolicy.decodeField(x.message)
                    default: break
                    }
                }
                guard let collection, let policy else { throw FormatError(reason: "checkpoint policy entry has no collection or no policy") }
                policies.append(RecordedPolicy(collection: collection, lsn: LSN(lsn), policy: policy))
            default: break
            }
        }
        guard let through else { throw FormatError(reason: "checkpoint has no throughLSN") }
        guard version <= UInt64(Event.Checkpoint.payloadVersion) else {
            throw FormatError(reason: "checkpoint payload version \(version) is newer than this Freshet reads (\(Event.Checkpoint.payloadVersion))")
        }
        return Event.Checkpoint(throughLSN: through, throughTime: time, keptLSNs: kept, removedCount: removed, entries: entries,
                                policies: version >= 2 ? policies : nil)
    }
}
