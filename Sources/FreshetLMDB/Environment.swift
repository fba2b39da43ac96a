internal import CLMDB
import Foundation

/// An open LMDB environment: one directory holding `data.mdb` and `lock.mdb`.
///
/// The environment is safe to share between threads (it is opened with `MDB_NOTLS`, so read
/// transactions are not tied to a thread). Transactions are reached only inside the
/// synchronous ``read(_:)`` and ``write(_:)`` closures, never across an `await`.
/// See <http://www.lmdb.tech/doc/group__mdb.html>.
package final class Environment: @unchecked Sendable {
    // `@unchecked`: an MDB_env is thread-safe; `handle` is set once in init and cleared only
    // by `close()`, which callers must not race with transactions (documented on `close`).
    private let handle: OpaquePointer
    private var isClosed = false
    /// The directory the environment lives in.
    package let path: String

    /// How hard a commit works to reach the disk.
    package enum SyncMode: Sendable {
        /// `fsync` data and meta page on every commit.
        case full
        /// `MDB_NOMETASYNC`: the meta page is flushed with the next commit; the last commit may be
        /// lost on an OS crash, the database stays intact.
        case noMetaSync
        /// `MDB_NOSYNC`: nothing is flushed; an OS crash may lose recent commits.
        case noSync
    }

    /// Opens (creating if needed) the environment in `path`, which must be an existing directory.
    ///
    /// - Parameters:
    ///   - mapSize: the size of the memory map in bytes (the largest the file may grow to).
    ///   - maxDatabases: how many named databases may be opened.
    /// - Throws: ``LMDBError`` from `mdb_env_create`, `mdb_env_set_*` or `mdb_env_open`;
    ///   the environment is closed again when opening fails.
    package init(path: String, mapSize: Int, maxDatabases: Int, sync: SyncMode, readOnly: Bool = false) throws(LMDBError) {
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "mdb_env_create")
        guard let env else { throw LMDBError(code: EINVAL, function: "mdb_env_create") }
        var flags = UInt32(MDB_NOTLS)
        switch sync {
        case .full: break
        case .noMetaSync: flags |= UInt32(MDB_NOMETASYNC)
        case .noSync: flags |= UInt32(MDB_NOSYNC)
        }
        if readOnly { flags |= UInt32(MDB_RDONLY) }
        do {
            try check(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize")
            try check(mdb_env_set_maxdbs(env, MDB_dbi(maxDatabases)), "mdb_env_set_maxdbs")
            try check(mdb_env_open(env, path, flags, 0o644), "mdb_env_open")
        } catch {
            // LMDB doc: "If this function fails, mdb_env_close() must be called to discard the handle."
            mdb_env_close(env)
            throw error
        }
        self.handle = env
        self.path = path
    }

    /// Closes the environment. Every transaction must have ended; calling it twice is harmless.
    package func close() {
        guard !isClosed else { return }
        isClosed = true
        mdb_env_close(handle)
    }

    deinit { close() }

    /// Runs `body` in a read-only transaction (a consistent snapshot) and ends it.
    ///
    /// - Throws: ``LMDBError`` from `mdb_txn_begin`, or whatever `body` throws.
    @available(*, noasync, message: "an LMDB transaction must not cross an await")
    package func read<R, E: Error>(_ body: (borrowing Transaction) throws(E) -> R) throws -> R {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        guard let txn else { throw LMDBError(code: EINVAL, function: "mdb_txn_begin") }
        let result: R
        do {
            result = try body(Transaction(handle: txn, isReadOnly: true))
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        // Committing (not aborting) a read-only transaction keeps the database handles it
        // opened: LMDB closes a handle opened in a transaction that is aborted (mdb_dbi_open doc).
        try check(mdb_txn_commit(txn), "mdb_txn_commit(read-only)")
        return result
    }

    /// Runs `body` in a write transaction and commits it; when `body` throws, the transaction
    /// is aborted and nothing it wrote is kept.
    ///
    /// LMDB allows one write transaction at a time per environment; a second caller blocks.
    /// - Throws: ``LMDBError`` from `mdb_txn_begin` or `mdb_txn_commit` (for example
    ///   ``LMDBError/mapFull``), or whatever `body` throws.
    @available(*, noasync, message: "an LMDB transaction must not cross an await")
    package func write<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(handle, nil, 0, &txn), "mdb_txn_begin")
        guard let txn else { throw LMDBError(code: EINVAL, function: "mdb_txn_begin") }
        let result: R
        do {
            result = try body(Transaction(handle: txn, isReadOnly: false))
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        // LMDB frees the transaction whether or not the commit succeeds.
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
        return result
    }

    /// Opens (or, in a write transaction with `create`, creates) the named database.
    /// Handles stay valid until the environment closes; they are never closed one by one.
    package func openDatabase(_ name: String, create: Bool) throws -> Database {
        try write { txn in try txn.openDatabase(name, create: create) }
    }

    /// Copies the environment to `path` (an existing empty directory), compacting free pages
    /// (`mdb_env_copy2` with `MDB_CP_COMPACT`).
    package func copyCompacted(to path: String) throws(LMDBError) {
        try check(mdb_env_copy2(handle, path, UInt32(MDB_CP_COMPACT)), "mdb_env_copy2")
    }

    /// Flushes the data buffers to disk (`mdb_env_sync` with force).
    package func sync() throws(LMDBError) {
        try check(mdb_env_sync(handle, 1), "mdb_env_sync")
    }

    /// Size facts about the environment: (map size in bytes, last used page number, page size in bytes).
    package func info() throws(LMDBError) -> (mapSize: Int, lastPage: Int, pageSize: Int) {
        var info = MDB_envinfo()
        try check(mdb_env_info(handle, &info), "mdb_env_info")
        var stat = MDB_stat()
        try check(mdb_env_stat(handle, &stat), "mdb_env_stat")
        return (info.me_mapsize, info.me_last_pgno, Int(stat.ms_psize))
    }
}
