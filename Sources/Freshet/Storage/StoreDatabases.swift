import FreshetLMDB

/// The named LMDB databases of a store (docs/log-format.md, "Materialized state").
///
/// | name | key | value |
/// |---|---|---|
/// | `log` | LSN, 8 bytes big-endian | a ``LogRecord`` |
/// | `rows` | collection key ‖ position (8 bytes big-endian) | row ID length (varint) ‖ ID ‖ JSON |
/// | `rowIndex` | collection key ‖ row ID (UTF-8) | position (8 bytes big-endian) |
/// | `marks` | collection name (UTF-8) | ``SyncMark`` fields |
/// | `meta` | ASCII name | value (see ``MetaKey``; the stamp journal, ``MarkStamps``) |
/// | `pending` | LSN of a `mutationProposed`, 8 bytes big-endian | its mutation ID, 16 bytes (unresolved mutations only) |
/// | `mutations` | mutation ID, 16 bytes | state (1 byte: 1 pending, 2 confirmed, 3 rolled back) ‖ LSN of its proposal (8 bytes) |
/// | `idMap` | collection key ‖ provisional row ID | the server's row ID, UTF-8 (empty: its mutation was rolled back) |
/// | `confirmed` | collection key ‖ row ID | LSN of the `mutationConfirmed` that wrote (1) or deleted (2) the row: 8 bytes ‖ 1 byte |
///
/// A collection key is the name's UTF-8 length (2 bytes big-endian) followed by the name, so
/// one collection's keys never prefix another's. A position is `page << 32 | index in page`.
struct StoreDatabases: Sendable {
    let log: Database
    let rows: Database
    let rowIndex: Database
    let marks: Database
    let meta: Database
    let pending: Database
    let mutations: Database
    let idMap: Database
    let confirmed: Database

    static let names = ["log", "rows", "rowIndex", "marks", "meta", "pending", "mutations", "idMap", "confirmed"]

    static func open(in txn: borrowing Transaction, create: Bool) throws -> StoreDatabases {
        StoreDatabases(
            log: try txn.openDatabase("log", create: create),
            rows: try txn.openDatabase("rows", create: create),
            rowIndex: try txn.openDatabase("rowIndex", create: create),
            marks: try txn.openDatabase("marks", create: create),
            meta: try txn.openDatabase("meta", create: create),
            pending: try txn.openDatabase("pending", create: create),
            mutations: try txn.openDatabase("mutations", create: create),
            idMap: try txn.openDatabase("idMap", create: create),
            confirmed: try txn.openDatabase("confirmed", create: create)
        )
    }
}

extension StoreDatabases {
    /// Handles of no environment, one per name in ``names`` order: for in-memory tables
    /// (``MemoryTables``) folded where no store is open, as when recovering a damaged one.
    static func detached() -> StoreDatabases {
        let h = names.enumerated().map { Database(detachedNamed: $0.element, index: UInt32($0.offset + 2)) }
        return StoreDatabases(log: h[0], rows: h[1], rowIndex: h[2], marks: h[3], meta: h[4], pending: h[5],
                              mutations: h[6], idMap: h[7], confirmed: h[8])
    }
}

/// Keys of the `meta` database.
enum MetaKey {
    /// The store format version, one byte (``StoreFormat/current``).
    static let formatVersion = Array("formatVersion".utf8)
    /// The last LSN ever assigned, 8 bytes big-endian; kept so LSNs are never reused even
    /// when compaction removes the newest records' predecessors.
    static let lastLSN = Array("lastLSN".utf8)
    /// The LSN of the latest `checkpoint` record, 8 bytes big-endian; absent until the first
    /// compaction. Replay starts from that checkpoint (docs/log-format.md §6.11).
    static let checkpoint = Array("checkpoint".utf8)
    /// The stamp journal (``MarkStamps``): the newest LSNs of collections whose SyncMark only
    /// local writes changed since it was written; absent when empty (store format 2).
    static let markStamps = Array("markStamps".utf8)
}

/// The store format: the layout of the named databases, versioned apart from the log
/// record's format (``LogRecord/formatVersion``), which it does not change.
package enum StoreFormat {
    /// The version this Freshet writes: 2 adds the stamp journal (``MetaKey/markStamps``).
    package static let current: UInt8 = 2
    /// The versions this Freshet reads. A format 1 store holds no journal, so it is a valid
    /// format 2 store; opening it for writing records version 2, which an older Freshet
    /// refuses (it would not read the journal's LSNs).
    package static let readable: ClosedRange<UInt8> = 1...2
}

enum Keys {
    static let maxCollectionBytes = 200
    static let maxRowIDBytes = 250
    /// The largest page index a paged collection may hold (pages 0 ... 65,535). Pages are
    /// fetched in order and a gap is filled with placeholders in the SyncMark, so the limit
    /// keeps one event from making the fold build billions of placeholders; positions
    /// (`page << 32 | index`) could hold far more.
    static let maxPageIndex = 65_535

    // Each key is built in one allocation of its final size: the fold builds several per
    // record, and `replay`/`verify` fold a million records (docs/performance.md, W5).

    static func collection(_ name: String) -> [UInt8] {
        let n = name.utf8.count
        var key: [UInt8] = []
        key.reserveCapacity(n + 2)
        // Appended names are at most 200 bytes (validate); a longer one can only come from a
        // damaged record read back, and must not trap: the length keeps its low 16 bits.
        key.append(UInt8(truncatingIfNeeded: n >> 8))
        key.append(UInt8(truncatingIfNeeded: n))
        key.append(contentsOf: name.utf8)
        return key
    }

    static func row(_ prefix: [UInt8], position: UInt64) -> [UInt8] {
        prefix.withUnsafeBytes { row($0, position: position) }
    }

    static func row(_ prefix: UnsafeRawBufferPointer, position: UInt64) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(prefix.count + 8)
        key.append(contentsOf: prefix)
        withUnsafeBytes(of: position.bigEndian) { key.append(contentsOf: $0) }
        return key
    }

    static func index(_ prefix: [UInt8], id: String) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(prefix.count + id.utf8.count)
        key.append(contentsOf: prefix)
        key.append(contentsOf: id.utf8)
        return key
    }

    static func position(page: Int, index: Int) -> UInt64 {
        UInt64(UInt32(clamping: page)) << 32 | UInt64(UInt32(clamping: index))
    }

    static func readUInt64(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        var v: UInt64 = 0
        for i in 0..<8 { v = v << 8 | UInt64(bytes[offset + i]) }
        return v
    }

    /// Checks a collection name: 1 to 200 bytes of UTF-8, no control characters (so a name
    /// never breaks a line of `freshet dump`).
    static func validate(collection name: String) throws(StoreError) {
        let n = name.utf8.count
        guard n > 0, n <= maxCollectionBytes, !name.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            throw StoreError(.invalidName, "collection name \(quoted(name)) must be 1 to \(maxCollectionBytes) bytes of UTF-8 without control characters")
        }
    }

    /// `name` quoted for an error message (`debugDescription`); past 64 characters cut, with
    /// a visible ellipsis and the length, so a 100,000-character ID gives one short line:
    /// `"aaaa…" (100000 characters)`.
    static func quoted(_ name: String) -> String {
        guard name.count > 64 else { return name.debugDescription }
        return String(name.prefix(64)).debugDescription.dropLast() + "…\" (\(name.count) characters)"
    }

    /// Checks a row ID: 1 to 250 bytes of UTF-8 (LMDB keys are at most 511 bytes).
    static func validate(rowID id: String, in collection: String) throws(StoreError) {
        let n = id.utf8.count
        guard n > 0, n <= maxRowIDBytes else {
            throw StoreError(.invalidName, "row ID \(quoted(id)) in \(collection) must be 1 to \(maxRowIDBytes) bytes of UTF-8")
        }
    }
}
