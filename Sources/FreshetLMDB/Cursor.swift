internal import CLMDB
import Foundation

/// A cursor over one database of a ``Transaction``, moved by its owner one entry at a time
/// (``next()``) rather than driving a closure as ``Transaction/forEach(_:from:reverse:_:)``
/// does: two ordered sequences can then be walked side by side (a merge), one of them with
/// this cursor. Lent to the closure of ``Transaction/withCursor(_:_:)`` and closed when it
/// returns; the current entry's bytes are lent to ``withEntry(_:)`` only, never returned.
///
/// Moving is `mdb_cursor_get` with `MDB_FIRST`, then `MDB_NEXT`: a walk of the leaf pages in
/// key order that never reads a branch page's keys (LMDB's mdb.c, `mdb_cursor_next`).
package struct Cursor: ~Copyable {
    private let handle: OpaquePointer
    private let name: String
    private var started = false
    /// The entry the cursor is on, valid until the next move or the transaction's end.
    private var key = UnsafeRawBufferPointer(start: nil, count: 0)
    private var value = UnsafeRawBufferPointer(start: nil, count: 0)
    /// Whether the cursor is on an entry: false before the first ``next()`` and after the last.
    package private(set) var isOnEntry = false

    fileprivate init(handle: OpaquePointer, name: String) {
        self.handle = handle
        self.name = name
    }

    deinit { mdb_cursor_close(handle) }

    /// Moves to the first entry (first call) or the next one; returns false at the end.
    /// - Throws: ``LMDBError`` from `mdb_cursor_get` (other than `MDB_NOTFOUND`).
    @discardableResult
    package mutating func next() throws(LMDBError) -> Bool {
        var k = MDB_val()
        var v = MDB_val()
        let rc = mdb_cursor_get(handle, &k, &v, started ? MDB_NEXT : MDB_FIRST)
        started = true
        guard rc == 0 else {
            isOnEntry = false
            if rc == MDB_NOTFOUND { return false }
            throw LMDBError(code: rc, function: "mdb_cursor_get(\(name))")
        }
        key = UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size)
        value = UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
        isOnEntry = true
        return true
    }

    /// Lends the current entry's key and value to `body` (valid for the call only). Calling it
    /// when ``isOnEntry`` is false is a programmer error.
    package func withEntry<R>(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        precondition(isOnEntry, "Cursor.withEntry when the cursor is on no entry")
        return try body(key, value)
    }
}

extension Transaction {
    /// Opens a ``Cursor`` over `db`, lends it to `body` and closes it (`mdb_cursor_open`,
    /// `mdb_cursor_close`). The cursor must not outlive `body`.
    /// - Throws: ``LMDBError`` from `mdb_cursor_open`, or what `body` throws.
    package func withCursor<R>(_ db: Database, _ body: (inout Cursor) throws -> R) throws -> R {
        var handle: OpaquePointer?
        try check(mdb_cursor_open(self.handle, db.dbi, &handle), "mdb_cursor_open(\(db.name))")
        guard let handle else { throw LMDBError(code: EINVAL, function: "mdb_cursor_open") }
        var cursor = Cursor(handle: handle, name: db.name)
        return try body(&cursor)
    }
}
