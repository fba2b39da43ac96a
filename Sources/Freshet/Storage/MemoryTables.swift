import FreshetLMDB

/// A store's named databases held in memory as ``OrderedTable``s: the fold target of the log
/// tools (`replay`, `verify`, `why`, `compact`), which fold a whole log with the store's own
/// ``Fold`` without writing a page. Memory: the materialized state (rows, index, marks,
/// mutation tables) and the proposals of the log, about twice their bytes on disk.
///
/// Tables are addressed by the handles of the store being read (``StoreDatabases``), so the
/// same ``MaterializedState`` reads either. Changes can be undone: between ``begin()`` and
/// ``commit()`` every change is journaled, and ``rollback()`` puts back what was there — what
/// an aborted LMDB write transaction does. Not thread-safe: one tool run uses it on one thread.
final class MemoryTables: FoldTables {
    let dbs: StoreDatabases
    private let handles: [Database]
    /// The tables, one per handle, and the undo journal, held behind pointers: a class's stored
    /// `var` costs a dynamic exclusivity check (`swift_beginAccess`, a thread-local access set)
    /// per access, which was a tenth of the folding thread's instructions on the W5 replay
    /// (docs/performance.md, "Issue 8 speed round 5 (fold side)"). Exclusivity holds by
    /// construction instead: one thread uses the tables, and no method changes them while it
    /// lends their bytes to a closure (a ``forEach(_:from:reverse:_:)`` body must not write).
    private let tables: UnsafeMutableBufferPointer<OrderedTable>
    private let undo: UnsafeMutablePointer<Journal>

    private struct Journal {
        var journaling = false
        var entries: [Change] = []
    }

    /// One journaled change: an entry added to a table (undone by removing it, found by its
    /// number: undone newest first, the table is then as the insert left it), or a key whose
    /// value `old` was replaced or removed (undone by putting `old` back). An insert kept its
    /// key as an array in the journal until issue 8's speed round 9 (docs/performance.md,
    /// "Issue 8 speed round 9 (fold inserts)").
    private enum Change {
        case added(table: Int, entry: Int32)
        case changed(table: Int, key: [UInt8], old: [UInt8])
    }

    /// Journals what `set` reported (the entry's number and the value replaced, nil: added).
    @inline(__always)
    private func journal(_ table: Int, _ key: @autoclosure () -> [UInt8], _ result: (entry: Int32, old: [UInt8]?)) {
        guard undo.pointee.journaling else { return }
        if let old = result.old {
            undo.pointee.entries.append(.changed(table: table, key: key(), old: old))
        } else {
            undo.pointee.entries.append(.added(table: table, entry: result.entry))
        }
    }

    /// Undoes one journaled change.
    private func undo(_ change: Change) {
        switch change {
        case .added(let table, let entry): tables[table].removeEntry(entry)
        case .changed(let table, let key, let old): tables[table].set(key, old)
        }
    }

    init(dbs: StoreDatabases) {
        self.dbs = dbs
        handles = [dbs.log, dbs.rows, dbs.rowIndex, dbs.marks, dbs.meta, dbs.pending, dbs.mutations, dbs.idMap, dbs.confirmed]
        tables = .allocate(capacity: handles.count)
        tables.initialize(repeating: OrderedTable())
        undo = .allocate(capacity: 1)
        undo.initialize(to: Journal())
    }

    deinit {
        tables.deinitialize()
        tables.deallocate()
        undo.deinitialize(count: 1)
        undo.deallocate()
    }

    /// The table of `db`, found by the database's name: each name is one database of the
    /// store whose handles these are (``StoreDatabases/names``). Compared by length, then by
    /// name (both inlined; `Database`'s own `==` is a call into its module per handle tried,
    /// and two unequal strings a call to the Unicode comparison — 2% of the W5 replay's
    /// folding thread until round 5).
    @inline(__always)
    private func table(_ db: Database) -> Int {
        let length = db.name.utf8.count
        for i in handles.indices where handles[i].name.utf8.count == length && handles[i].name == db.name { return i }
        preconditionFailure("MemoryTables holds no database named \(db.name)")
    }

    /// The number of entries in `db`.
    func count(_ db: Database) -> Int { tables[table(db)].count }

    // MARK: Undo

    /// Starts journaling changes (a transaction); one at a time.
    func begin() {
        precondition(!undo.pointee.journaling, "MemoryTables.begin while a change set is open")
        undo.pointee.journaling = true
        undo.pointee.entries.removeAll(keepingCapacity: true)
    }

    /// Keeps the changes since ``begin()``.
    func commit() {
        undo.pointee.journaling = false
        undo.pointee.entries.removeAll(keepingCapacity: true)
    }

    /// Undoes every change since ``begin()``, newest first.
    func rollback() {
        for change in undo.pointee.entries.reversed() { undo(change) }
        undo.pointee.journaling = false
        undo.pointee.entries.removeAll(keepingCapacity: true)
    }

    /// A mark in the journal, to undo back to with ``rollback(to:)`` (a nested transaction).
    var savepoint: Int { undo.pointee.entries.count }

    /// Undoes the changes made after `savepoint`, keeping the change set open.
    func rollback(to savepoint: Int) {
        while undo.pointee.entries.count > savepoint { undo(undo.pointee.entries.removeLast()) }
    }

    // MARK: Prefetching (hints only)

    /// The number of `db`'s table, for the prefetch calls below.
    func tableNumber(_ db: Database) -> Int { table(db) }

    /// The upsert's lookup (``withIndexedValue(_:key:rows:prefix:_:)``) of a key of table
    /// `index` whose hash is `hash`, asked of the CPU ahead, in three stages a few records
    /// apart, each reading only what the one before brought into cache: `stage` 0 the hash
    /// slot, 1 the index entry's record the slot names, 2 the linked record of table `rows`.
    /// A hint: nothing is changed, and a wrong guess only costs a wasted prefetch
    /// (docs/performance.md, "Issue 8 speed round 7 (fold side)").
    @inline(__always)
    func prefetchIndexed(stage: Int, index: Int, rows: Int, hash: UInt64) {
        switch stage {
        case 0: tables[index].prefetchSlot(hash: hash)
        case 1: tables[index].prefetchRecord(hash: hash, lines: 1)
        default:
            guard let link = tables[index].guessedLink(hash: hash) else { return }
            tables[rows].prefetchEntry(link, lines: 2)
        }
    }

    // MARK: FoldTables

    func withValue<R>(_ db: Database, key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        let t = table(db)
        // Found first (remembered for a put that follows), then lent: the table is not
        // being changed while `body` reads its bytes.
        guard let offset = tables[t].locate(key) else { return nil }
        return try tables[t].withValue(at: offset) { try body($0) }
    }

    /// One hash lookup, in `index`: the row entry is the one linked to the index entry when
    /// its key is still `prefix` ‖ position (checked, so a link left by any change is never
    /// followed to another row), else it is looked up and linked for the next time. The log
    /// tools' fold reads each row this way before it replaces it; a second lookup was a cache
    /// miss per record (docs/performance.md, "Issue 8 speed round 4 (fold side)").
    func withIndexedValue<R>(_ index: Database, key: UnsafeRawBufferPointer, rows: Database, prefix: UnsafeRawBufferPointer,
                             _ body: (_ position: UInt64, _ value: UnsafeRawBufferPointer?) throws -> R) throws -> R? {
        try withIndexedValue(table(index), key: key, hash: ByteHashIndex.hash(key), rows: table(rows), prefix: prefix, body)
    }

    /// ``withIndexedValue(_:key:rows:prefix:_:)`` with the tables by number (``tableNumber(_:)``)
    /// and the key's hash given (``ByteHashIndex/hash(_:)`` of `key`): the log tools' one-row
    /// upserts, whose keys the reading thread built and hashed (``FoldChunk/Upsert``).
    @inline(__always)
    func withIndexedValue<R>(_ ti: Int, key: UnsafeRawBufferPointer, hash: UInt64, rows tr: Int, prefix: UnsafeRawBufferPointer,
                             _ body: (_ position: UInt64, _ value: UnsafeRawBufferPointer?) throws -> R) throws -> R? {
        guard let found = tables[ti].locate(bytes: key, hash: hash),
              let position = tables[ti].withValue(at: found.offset, { $0.count == 8 ? UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) : nil }) else {
            return nil
        }
        if let offset = tables[tr].offset(ofEntry: tables[ti].link(found.entry), ifKeyIs: prefix, position) {
            return try tables[tr].withValue(at: offset) { try body(position, $0) }
        }
        let row = Self.withRowKey(prefix, position) { tables[tr].locate(bytes: $0) }
        guard let row else { return try body(position, nil) }
        tables[ti].setLink(found.entry, Int32(row.entry))
        return try tables[tr].withValue(at: row.offset) { try body(position, $0) }
    }

    func get(_ db: Database, key: [UInt8]) throws -> [UInt8]? {
        tables[table(db)].value(key)
    }

    func put(_ db: Database, key: [UInt8], value: [UInt8], append: Bool, noOverwrite: Bool) throws(LMDBError) {
        let result = value.withUnsafeBytes { bytes in
            Result { () throws(LMDBError) in try put(db, key: key, bytes: bytes, append: append, noOverwrite: noOverwrite) }
        }
        try result.get()
    }

    func put(_ db: Database, key: [UInt8], bytes: UnsafeRawBufferPointer, append: Bool, noOverwrite: Bool) throws(LMDBError) {
        let t = table(db)
        if append, let last = tables[t].lastKey, OrderedTable.compare(key, last) <= 0 {
            throw LMDBError(code: LMDBError.keyExists.code, function: "put(\(db.name), append)")
        }
        if noOverwrite, tables[t].locate(key) != nil {
            throw LMDBError(code: LMDBError.keyExists.code, function: "put(\(db.name), noOverwrite)")
        }
        journal(t, key, key.withUnsafeBytes { k in tables[t].set(bytes: k, reserving: bytes.count) { $0.copyMemory(from: bytes) } })
    }

    /// Puts a copy of `bytes` under `key` in table `t` (``tableNumber(_:)``), journaled as
    /// ``put(_:key:bytes:append:noOverwrite:)`` is; `hash` is ``ByteHashIndex/hash(_:)`` of
    /// `key` when known. For the log tools' one-row upserts, whose keys are built on the stack
    /// or lent from the chunk: a new entry allocates nothing of its own (docs/performance.md,
    /// "Issue 8 speed round 9 (fold inserts)").
    @inline(__always)
    func put(_ t: Int, key: UnsafeRawBufferPointer, hash: UInt64? = nil, bytes: UnsafeRawBufferPointer) {
        journal(t, Array(key), tables[t].set(bytes: key, hash: hash, reserving: bytes.count) { $0.copyMemory(from: bytes) })
    }

    /// Lends `prefix` ‖ `position` (8 bytes, big-endian: a `rows` key, ``Keys/row(_:position:)``)
    /// built on the stack to `body`.
    @inline(__always)
    static func withRowKey<R>(_ prefix: UnsafeRawBufferPointer, _ position: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: prefix.count + 8, alignment: 1) { key in
            key.copyMemory(from: prefix)
            key.storeBytes(of: position.bigEndian, toByteOffset: prefix.count, as: UInt64.self)
            return try body(UnsafeRawBufferPointer(key))
        }
    }

    /// ``MaterializedState/lastPosition(prefix:in:)`` in table `t` (`rows`, ``tableNumber(_:)``),
    /// with the key it walks back from built on the stack (an array per inserted row until
    /// round 9): the largest position of a row under `prefix`, nil when there is none.
    func lastPosition(_ t: Int, prefix: UnsafeRawBufferPointer) -> UInt64? {
        Self.withRowKey(prefix, UInt64.max) { start in
            var last: UInt64?
            tables[t].forEach(fromBytes: start, reverse: true) { key, _ in
                last = MaterializedState.position(ofRowKey: key, prefix: prefix)
                return false
            }
            return last
        }
    }

    func put(_ db: Database, key: [UInt8], reserving count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) throws(LMDBError) {
        // Written straight into the table's arena (a zeroed array per row first, until round 5).
        let t = table(db)
        journal(t, key, key.withUnsafeBytes { tables[t].set(bytes: $0, reserving: count, fill) })
    }

    @discardableResult
    func delete(_ db: Database, key: [UInt8]) throws(LMDBError) -> Bool {
        let t = table(db)
        guard let old = tables[t].remove(key) else { return false }
        if undo.pointee.journaling { undo.pointee.entries.append(.changed(table: t, key: key, old: old)) }
        return true
    }

    func forEach(_ db: Database, from start: [UInt8]?, reverse: Bool,
                 _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool) throws {
        try tables[table(db)].forEach(from: start, reverse: reverse, body)
    }
}

extension MemoryTables {
    /// Every entry of `db` in key order (keys and values copied).
    func entries(_ db: Database) -> [(key: [UInt8], value: [UInt8])] {
        tables[table(db)].entries()
    }
}
