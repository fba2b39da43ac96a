internal import CLMDB
import Foundation

/// An LMDB transaction, lent to the closure of ``Environment/read(_:)`` or
/// ``Environment/write(_:)``. It cannot be copied, stored or used after the closure returns.
///
/// Bytes read from the database are either copied out (`get`) or lent to a closure
/// (`withValue`, `forEach`) for the duration of the call; pointers never escape.
package struct Transaction: ~Copyable {
    let handle: OpaquePointer
    /// Whether this is a read-only transaction; writing in one is a programmer error.
    package let isReadOnly: Bool

    init(handle: OpaquePointer, isReadOnly: Bool) {
        self.handle = handle
        self.isReadOnly = isReadOnly
    }

    /// Opens a named database; with `create`, creates it when missing (write transactions only).
    /// - Throws: ``LMDBError/notFound`` when it does not exist and `create` is false.
    package func openDatabase(_ name: String, create: Bool) throws(LMDBError) -> Database {
        var dbi = MDB_dbi()
        let flags = create ? UInt32(MDB_CREATE) : 0
        try check(mdb_dbi_open(handle, name, flags, &dbi), "mdb_dbi_open(\(name))")
        return Database(dbi: dbi, name: name)
    }

    /// Lends the value stored under `key` to `body`, or returns nil when there is none.
    package func withValue<R>(_ db: Database, key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        var value = MDB_val()
        let rc = key.withUnsafeBytes { keyBytes in
            var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            return mdb_get(handle, db.dbi, &k, &value)
        }
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "mdb_get(\(db.name))")
        return try body(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))
    }

    /// ``withValue(_:key:_:)`` with the key lent as bytes (a cursor's key, a slice), so a
    /// lookup needs no array of its own. The key's bytes must stay valid for the call only.
    package func withValue<R>(_ db: Database, key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        var value = MDB_val()
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        let rc = mdb_get(handle, db.dbi, &k, &value)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "mdb_get(\(db.name))")
        return try body(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))
    }

    /// The ID of the snapshot this transaction reads (`mdb_txn_id`: for a read-only
    /// transaction, the ID of the last write transaction committed when it began). Two read
    /// transactions with the same ID see the same pages.
    package var snapshotID: Int { mdb_txn_id(handle) }

    /// A copy of the value stored under `key`, or nil when there is none.
    package func get(_ db: Database, key: [UInt8]) throws -> [UInt8]? {
        try withValue(db, key: key) { Array($0) }
    }

    /// Stores `value` under `key`.
    ///
    /// - Parameters:
    ///   - append: use `MDB_APPEND`: the key must sort after every key in the database, which
    ///     makes sequential inserts cheap; a smaller key fails with ``LMDBError/keyExists``.
    ///   - noOverwrite: use `MDB_NOOVERWRITE`: fail with ``LMDBError/keyExists`` when the key exists.
    package func put(_ db: Database, key: [UInt8], value: [UInt8], append: Bool = false, noOverwrite: Bool = false) throws(LMDBError) {
        // Array.withUnsafeBytes rethrows untyped: carry the typed error out as a Result.
        let outcome: Result<Void, LMDBError> = value.withUnsafeBytes { bytes in
            do throws(LMDBError) {
                return .success(try put(db, key: key, bytes: bytes, append: append, noOverwrite: noOverwrite))
            } catch {
                return .failure(error)
            }
        }
        try outcome.get()
    }

    /// ``put(_:key:value:append:noOverwrite:)`` with the value's bytes lent (LMDB copies them).
    package func put(_ db: Database, key: [UInt8], bytes value: UnsafeRawBufferPointer, append: Bool = false, noOverwrite: Bool = false) throws(LMDBError) {
        precondition(!isReadOnly, "put in a read-only transaction")
        var flags: UInt32 = 0
        if append { flags |= UInt32(MDB_APPEND) }
        if noOverwrite { flags |= UInt32(MDB_NOOVERWRITE) }
        let rc = key.withUnsafeBytes { keyBytes in
            var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
            return mdb_put(handle, db.dbi, &k, &v, flags)
        }
        try check(rc, "mdb_put(\(db.name))")
    }

    /// Puts `count` entries through one cursor (`mdb_cursor_put`), entry `i` (`0 ..< count`,
    /// in that order) lent by `entry`; its bytes must stay valid for the whole call.
    ///
    /// Cheaper than `count` separate puts when the keys come in ascending order: a positioned
    /// cursor whose leaf page holds the next key, or that is at the table's end, searches only
    /// that page instead of descending from the root (`mdb_cursor_set` in LMDB's mdb.c; a
    /// `mdb_put` starts a fresh cursor at the root every time). Any order is correct.
    /// - Parameter noOverwrite: `MDB_NOOVERWRITE`: an entry whose key is already stored is left
    ///   as it is and reported instead of failing the call.
    /// - Returns: with `noOverwrite`, the indices of the entries whose key was already stored
    ///   (in ascending order); otherwise empty.
    /// - Throws: ``LMDBError`` from `mdb_cursor_open` or `mdb_cursor_put`; the entries before
    ///   the failing one are stored (the caller's transaction decides what stays).
    package func putEach(_ db: Database, count: Int, noOverwrite: Bool,
                         _ entry: (Int) -> (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)) throws(LMDBError) -> [Int] {
        precondition(!isReadOnly, "put in a read-only transaction")
        var held: [Int] = []
        guard count > 0 else { return held }
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(handle, db.dbi, &cursor), "mdb_cursor_open(\(db.name))")
        guard let cursor else { throw LMDBError(code: EINVAL, function: "mdb_cursor_open") }
        defer { mdb_cursor_close(cursor) }
        let flags = noOverwrite ? UInt32(MDB_NOOVERWRITE) : 0
        for i in 0..<count {
            let (key, value) = entry(i)
            var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
            var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
            let rc = mdb_cursor_put(cursor, &k, &v, flags)
            if rc == MDB_KEYEXIST && noOverwrite {
                held.append(i)
                continue
            }
            try check(rc, "mdb_cursor_put(\(db.name))")
        }
        return held
    }

    /// Puts `key` with a value of `count` bytes that `fill` writes in place, into the space
    /// LMDB reserves for it in its map (`MDB_RESERVE`), so a large value built from parts is
    /// not first assembled in a buffer of its own. `fill` must write all `count` bytes and
    /// must not keep the buffer, which is valid only until the next update in this
    /// transaction (LMDB's `mdb_put` documentation). Not for `MDB_DUPSORT` databases.
    /// - Throws: ``LMDBError`` from `mdb_put` (`fill` is then not called).
    package func put(_ db: Database, key: [UInt8], reserving count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) throws(LMDBError) {
        try put(db, key: key, reserving: count, append: false, fill)
    }

    /// ``put(_:key:reserving:_:)``; with `append`, also `MDB_APPEND` (the key sorts after
    /// every key of `db`, or ``LMDBError/keyExists``), as the log's records are put.
    package func put(_ db: Database, key: [UInt8], reserving count: Int, append: Bool, _ fill: (UnsafeMutableRawBufferPointer) -> Void) throws(LMDBError) {
        precondition(!isReadOnly, "put in a read-only transaction")
        var reserved: UnsafeMutableRawPointer?
        let flags = UInt32(MDB_RESERVE) | (append ? UInt32(MDB_APPEND) : 0)
        let rc = key.withUnsafeBytes { keyBytes in
            var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            var v = MDB_val(mv_size: count, mv_data: nil)
            let rc = mdb_put(handle, db.dbi, &k, &v, flags)
            reserved = v.mv_data
            return rc
        }
        try check(rc, "mdb_put(\(db.name), reserve)")
        fill(UnsafeMutableRawBufferPointer(start: reserved, count: count))
    }

    /// Deletes `key`; returns whether it was there.
    @discardableResult
    package func delete(_ db: Database, key: [UInt8]) throws(LMDBError) -> Bool {
        precondition(!isReadOnly, "delete in a read-only transaction")
        let rc = key.withUnsafeBytes { keyBytes in
            var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            return mdb_del(handle, db.dbi, &k, nil)
        }
        if rc == MDB_NOTFOUND { return false }
        try check(rc, "mdb_del(\(db.name))")
        return true
    }

    /// Deletes every key of the database, keeping the database (`mdb_drop` with 0).
    package func clear(_ db: Database) throws(LMDBError) {
        precondition(!isReadOnly, "clear in a read-only transaction")
        try check(mdb_drop(handle, db.dbi, 0), "mdb_drop(\(db.name))")
    }

    /// The number of keys in the database (`mdb_stat`).
    package func count(_ db: Database) throws(LMDBError) -> Int {
        var stat = MDB_stat()
        try check(mdb_stat(handle, db.dbi, &stat), "mdb_stat(\(db.name))")
        return stat.ms_entries
    }

    /// Walks the database in key order, lending each key and value to `body` until it
    /// returns false.
    ///
    /// - Parameters:
    ///   - from: the first key to visit (the smallest key ≥ `from`); nil starts at the first key.
    ///     With `reverse`, the walk starts at the largest key ≤ `from` (nil: the last key) and
    ///     goes backwards.
    package func forEach(
        _ db: Database, from start: [UInt8]? = nil, reverse: Bool = false,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(handle, db.dbi, &cursor), "mdb_cursor_open(\(db.name))")
        guard let cursor else { throw LMDBError(code: EINVAL, function: "mdb_cursor_open") }
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        var rc: Int32
        // The start key's bytes must outlive the positioning call only.
        if let start {
            rc = start.withUnsafeBytes { bytes in
                key = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
                return mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE)
            }
            if reverse {
                if rc == MDB_NOTFOUND {
                    rc = mdb_cursor_get(cursor, &key, &value, MDB_LAST)
                } else if rc == 0 {
                    let found = UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
                    let exact = found.elementsEqual(start)
                    if !exact { rc = mdb_cursor_get(cursor, &key, &value, MDB_PREV) }
                }
            }
        } else {
            rc = mdb_cursor_get(cursor, &key, &value, reverse ? MDB_LAST : MDB_FIRST)
        }
        while rc == 0 {
            let k = UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
            let v = UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
            guard try body(k, v) else { return }
            rc = mdb_cursor_get(cursor, &key, &value, reverse ? MDB_PREV : MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try check(rc, "mdb_cursor_get(\(db.name))") }
    }

    /// Runs `body` in a nested write transaction: when `body` throws, only what it wrote is
    /// undone and the parent transaction stays usable (`mdb_txn_begin` with a parent).
    package func nested<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        precondition(!isReadOnly, "nested transaction in a read-only transaction")
        var child: OpaquePointer?
        try check(mdb_txn_begin(mdb_txn_env(handle), handle, 0, &child), "mdb_txn_begin(nested)")
        guard let child else { throw LMDBError(code: EINVAL, function: "mdb_txn_begin") }
        let result: R
        do {
            result = try body(Transaction(handle: child, isReadOnly: false))
        } catch {
            mdb_txn_abort(child)
            throw error
        }
        try check(mdb_txn_commit(child), "mdb_txn_commit(nested)")
        return result
    }
}
