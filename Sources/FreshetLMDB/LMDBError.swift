internal import CLMDB

/// An error returned by a liblmdb call: the C return code, the function that returned it,
/// and LMDB's own message for the code (`mdb_strerror`).
///
/// Codes are compared with `~=`, so callers write `catch LMDBError.mapFull`.
package struct LMDBError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The C return code (an LMDB code such as `MDB_MAP_FULL`, or an `errno` value).
    package let code: Int32
    /// The liblmdb function that failed, such as `"mdb_put"`.
    package let function: String

    package init(code: Int32, function: String) {
        self.code = code
        self.function = function
    }

    /// LMDB's text for the code (`mdb_strerror`), which also covers `errno` values.
    package var message: String {
        code == Self.closed.code ? "the environment is closed" : String(cString: mdb_strerror(code))
    }

    package var description: String { "\(function): \(message) (code \(code))" }

    /// The key or database was not found. The corresponding LMDB code is `MDB_NOTFOUND`.
    package static let notFound = LMDBError(code: MDB_NOTFOUND, function: "")
    /// The key already exists (with `MDB_NOOVERWRITE`), or an `MDB_APPEND` key was not larger
    /// than the last one. The corresponding LMDB code is `MDB_KEYEXIST`.
    package static let keyExists = LMDBError(code: MDB_KEYEXIST, function: "")
    /// The memory map is full: the environment needs a larger map size.
    /// The corresponding LMDB code is `MDB_MAP_FULL`.
    package static let mapFull = LMDBError(code: MDB_MAP_FULL, function: "")
    /// Too many named databases are open. The corresponding LMDB code is `MDB_DBS_FULL`.
    package static let databasesFull = LMDBError(code: MDB_DBS_FULL, function: "")
    /// The file is not an LMDB environment. The corresponding LMDB code is `MDB_INVALID`.
    package static let invalid = LMDBError(code: MDB_INVALID, function: "")
    /// Version mismatch with the file's liblmdb. The corresponding LMDB code is `MDB_VERSION_MISMATCH`.
    package static let versionMismatch = LMDBError(code: MDB_VERSION_MISMATCH, function: "")
    /// The data file is corrupted. The corresponding LMDB code is `MDB_CORRUPTED`.
    package static let corrupted = LMDBError(code: MDB_CORRUPTED, function: "")
    /// A read transaction table is full. The corresponding LMDB code is `MDB_READERS_FULL`.
    package static let readersFull = LMDBError(code: MDB_READERS_FULL, function: "")
    /// The transaction has too many dirty pages. The corresponding LMDB code is `MDB_TXN_FULL`.
    package static let transactionFull = LMDBError(code: MDB_TXN_FULL, function: "")
    /// Another process grew the map beyond this one's size. The corresponding LMDB code is `MDB_MAP_RESIZED`.
    package static let mapResized = LMDBError(code: MDB_MAP_RESIZED, function: "")
    /// The ``Environment`` was closed before the call began. Not an LMDB code: -30700 lies
    /// outside LMDB's own range (`MDB_KEYEXIST` -30799 through `MDB_LAST_ERRCODE`).
    package static let closed = LMDBError(code: -30_700, function: "")

    /// Matches by code only, so the function name does not matter in a `catch` pattern.
    package static func ~= (pattern: LMDBError, error: any Error) -> Bool {
        guard let error = error as? LMDBError else { return false }
        return error.code == pattern.code
    }
}

/// The one place every liblmdb return code goes through. The function's name is built only
/// when the call failed: an interpolated name (`"mdb_put(\(db.name))"`) built on every call
/// was a tenth of the writer's time folding a 1,000-row page (docs/performance.md).
@inline(__always)
func check(_ rc: Int32, _ function: @autoclosure () -> String) throws(LMDBError) {
    if rc != 0 { throw LMDBError(code: rc, function: function()) }
}
