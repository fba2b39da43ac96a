import FreshetLMDB

/// The ordered key-value tables the fold reads and writes: the store's named databases
/// (``StoreDatabases``), addressed by their handles. Keys sort as LMDB's default comparison
/// sorts them (`memcmp` over the shorter length, then the shorter key first).
///
/// Two implementations share every line of ``Fold`` and ``MaterializedState``:
/// - an LMDB ``Transaction`` (the store's writer, snapshots, import), and
/// - ``MemoryTables``, ordered maps in memory, into which `replay`, `verify`, `why` and
///   `compact` fold a log without writing a page (docs/performance.md, W5).
///
/// Bytes lent to a closure (`withValue`, `forEach`) are valid for the call only; a `forEach`
/// body must not write to the tables it walks.
protocol FoldTables: ~Copyable {
    /// Lends the value stored under `key` to `body`, or returns nil when there is none.
    func withValue<R>(_ db: Database, key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R?
    /// A copy of the value stored under `key`, or nil when there is none.
    func get(_ db: Database, key: [UInt8]) throws -> [UInt8]?
    /// Stores `value` under `key`. With `append`, `key` must sort after every key of the table;
    /// with `noOverwrite`, an existing key is left as it is.
    /// - Throws: ``LMDBError/keyExists`` for an existing key with `noOverwrite` or a key that
    ///   does not sort last with `append` (LMDB's `mdb_put` documentation); storage errors.
    func put(_ db: Database, key: [UInt8], value: [UInt8], append: Bool, noOverwrite: Bool) throws(LMDBError)
    /// The same with the value's bytes lent for the call (copied by the table), so a value
    /// sliced from a larger buffer needs no array of its own.
    func put(_ db: Database, key: [UInt8], bytes: UnsafeRawBufferPointer, append: Bool, noOverwrite: Bool) throws(LMDBError)
    /// Puts `key` with a value of `count` bytes that `fill` writes in place (in LMDB: into
    /// its map, `MDB_RESERVE`; no buffer of the value's own). `fill` writes all `count`
    /// bytes and does not keep the buffer.
    func put(_ db: Database, key: [UInt8], reserving count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) throws(LMDBError)
    /// Puts `count` entries, entry `i` lent by `entry` (valid for the whole call), in the order
    /// `0 ..< count`; with `noOverwrite` an entry whose key is stored is left out and its
    /// index returned (ascending). In LMDB one cursor serves them all, cheapest with ascending
    /// keys (``Transaction/putEach(_:count:noOverwrite:_:)``).
    /// - Throws: storage errors (never ``LMDBError/keyExists``).
    func putEach(_ db: Database, count: Int, noOverwrite: Bool,
                 _ entry: (Int) -> (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)) throws(LMDBError) -> [Int]
    /// Deletes `key`; returns whether it was there.
    @discardableResult
    func delete(_ db: Database, key: [UInt8]) throws(LMDBError) -> Bool
    /// Walks the table in key order from the smallest key ≥ `start` (nil: the first key), or
    /// with `reverse` backwards from the largest key ≤ `start` (nil: the last key), lending
    /// each key and value to `body` until it returns false.
    func forEach(_ db: Database, from start: [UInt8]?, reverse: Bool,
                 _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool) throws
    /// The upsert's read (``MaterializedState/storedRow(id:json:prefix:in:)``): looks `key` up
    /// in `index`, whose values are positions (8 bytes, big-endian), then the entry of `rows`
    /// under `prefix` ‖ that position, and lends the position and that entry's value (nil when
    /// `rows` has none) to `body`. Returns nil when `key` is not in `index` or its value is not
    /// 8 bytes long. An LMDB transaction searches both B-trees (the default below);
    /// ``MemoryTables`` follows a link from the index entry to the row entry instead of a second
    /// hash lookup (docs/performance.md, "Issue 8 speed round 4 (fold side)").
    func withIndexedValue<R>(_ index: Database, key: UnsafeRawBufferPointer, rows: Database, prefix: UnsafeRawBufferPointer,
                             _ body: (_ position: UInt64, _ value: UnsafeRawBufferPointer?) throws -> R) throws -> R?
}

extension FoldTables where Self: ~Copyable {
    /// Two lookups, each with a key of its own: what an LMDB transaction does.
    func withIndexedValue<R>(_ index: Database, key: UnsafeRawBufferPointer, rows: Database, prefix: UnsafeRawBufferPointer,
                             _ body: (_ position: UInt64, _ value: UnsafeRawBufferPointer?) throws -> R) throws -> R? {
        guard let position = try withValue(index, key: Array(key), { $0.count == 8 ? Keys.readUInt64($0, at: 0) : nil }) ?? nil else {
            return nil
        }
        let found = try withValue(rows, key: Keys.row(prefix, position: position)) { try body(position, $0) }
        if let found { return found }
        return try body(position, nil)
    }

    /// ``putEach(_:count:noOverwrite:_:)`` as one ``put(_:key:bytes:append:noOverwrite:)``
    /// per entry (``MemoryTables``; LMDB has its own, with a cursor).
    func putEach(_ db: Database, count: Int, noOverwrite: Bool,
                 _ entry: (Int) -> (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)) throws(LMDBError) -> [Int] {
        var held: [Int] = []
        for i in 0..<count {
            let (key, value) = entry(i)
            do {
                try put(db, key: Array(key), bytes: value, append: false, noOverwrite: noOverwrite)
            } catch {
                guard noOverwrite, error.code == LMDBError.keyExists.code else { throw error }
                held.append(i)
            }
        }
        return held
    }

    /// ``put(_:key:value:append:noOverwrite:)`` replacing any value stored under `key`.
    func put(_ db: Database, key: [UInt8], value: [UInt8]) throws(LMDBError) {
        try put(db, key: key, value: value, append: false, noOverwrite: false)
    }

    /// ``put(_:key:value:append:noOverwrite:)`` with only `noOverwrite` given.
    func put(_ db: Database, key: [UInt8], value: [UInt8], noOverwrite: Bool) throws(LMDBError) {
        try put(db, key: key, value: value, append: false, noOverwrite: noOverwrite)
    }

    /// ``put(_:key:value:append:noOverwrite:)`` with only `append` given.
    func put(_ db: Database, key: [UInt8], value: [UInt8], append: Bool) throws(LMDBError) {
        try put(db, key: key, value: value, append: append, noOverwrite: false)
    }

    /// Walks the whole table in key order.
    func forEach(_ db: Database, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool) throws {
        try forEach(db, from: nil, reverse: false, body)
    }

    /// Walks the table in key order from the smallest key ≥ `start`.
    func forEach(_ db: Database, from start: [UInt8]?, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool) throws {
        try forEach(db, from: start, reverse: false, body)
    }

    /// Walks the whole table, backwards with `reverse`.
    func forEach(_ db: Database, reverse: Bool, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool) throws {
        try forEach(db, from: nil, reverse: reverse, body)
    }
}

extension Transaction: FoldTables {}
