internal import CLMDB
import Foundation

/// An open LMDB environment: one directory holding `data.mdb` and `lock.mdb`.
///
/// The environment is safe to share between threads (it is opened with `MDB_NOTLS`, so read
/// transactions are not tied to a thread). Transactions are reached only inside the
/// synchronous ``read(_:)`` and ``write(_:)`` closures, never across an `await`.
/// See <http://www.lmdb.tech/doc/group__mdb.html>.
package final class Environment: @unchecked Sendable {
    // `@unchecked`: an MDB_env is thread-safe; `handle` is set once in init and freed only by
    // `close()`, which holds `gate` exclusive; `isClosed` is written only then and read only
    // with `gate` held (shared or exclusive).
    private let handle: OpaquePointer
    private var isClosed = false
    /// Held shared by every transaction and every other call on `handle`, exclusive while the
    /// map size changes and while the environment closes.
    private let gate = TransactionGate()
    /// The directory the environment lives in.
    package let path: String
    /// Run after each committed write transaction (see ``DriveFlush``); nil: LMDB's own sync only.
    private let driveFlush: DriveFlush?
    /// A descriptor of `lock.mdb` for ``isSharedWithOtherProcesses()`` (-1: none could be
    /// opened). Closed only after `mdb_env_close`: closing any descriptor of the file drops
    /// this process's `fcntl` locks on it, LMDB's included (POSIX record-lock semantics).
    private let lockProbe: Int32

    /// Flushes the drive's write cache for `data.mdb` after LMDB's own sync; given the file
    /// descriptor, returns 0 or an `errno` value.
    ///
    /// On Darwin, `fsync(2)` — all liblmdb 0.9 calls — moves data only as far as the drive's
    /// cache; `fcntl(F_FULLFSYNC)` asks the drive to write its cache to stable storage
    /// (Apple's fsync(2) and fcntl(2) man pages). ``defaultDriveFlush(for:)`` gives that for
    /// ``SyncMode/full`` on Darwin and nothing elsewhere (Linux's `fsync` already flushes the
    /// drive cache). Tests pass their own to exercise the path on Linux.
    package typealias DriveFlush = @Sendable (_ fd: Int32) -> Int32

    /// Which ``DriveFlush`` an environment runs.
    package enum DriveFlushChoice: Sendable {
        /// ``Environment/defaultDriveFlush(for:)``.
        case platform
        /// This one, or none (the test seam).
        case custom(DriveFlush?)
    }

    /// `fcntl(fd, command)` as a ``DriveFlush``: `F_FULLFSYNC` on Darwin; tests use a command
    /// that exists on Linux.
    package static func fcntlDriveFlush(command: Int32) -> DriveFlush {
        { fd in fcntl(fd, command) == -1 ? errno : 0 }
    }

    /// The drive flush a store uses for `sync` on this platform: `fcntl(F_FULLFSYNC)` for
    /// ``SyncMode/full`` on Darwin, nil otherwise.
    package static func defaultDriveFlush(for sync: SyncMode) -> DriveFlush? {
        #if canImport(Darwin)
        return sync == .full ? fcntlDriveFlush(command: F_FULLFSYNC) : nil
        #else
        return nil
        #endif
    }

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
    /// New files are created owner-only (`0600`). Before `mdb_env_open`, the lock file is
    /// created and its blocks allocated with `posix_fallocate`: LMDB `ftruncate`s `lock.mdb`
    /// and writes it through a shared memory map, so on a full file system the first write
    /// into the map raises `SIGBUS` instead of returning an error. With the blocks reserved
    /// first, a full disk is an `ENOSPC` error from `posix_fallocate`. When opening fails,
    /// the files this call created are removed again, so the directory is left as it was.
    ///
    /// Stale reader slots (left by processes that died holding a read transaction) are
    /// cleared right after opening with `mdb_reader_check`, read-only openers included.
    ///
    /// - Parameters:
    ///   - mapSize: the size of the memory map in bytes (the largest the file may grow to).
    ///   - maxDatabases: how many named databases may be opened.
    ///   - maxReaders: the size of the reader table (read transactions open at once, in all
    ///     processes); only the process that creates `lock.mdb` sets it (`mdb_env_set_maxreaders`).
    /// - Throws: ``LMDBError`` from `posix_fallocate` (`ENOSPC`), `mdb_env_create`,
    ///   `mdb_env_set_*`, `mdb_env_open` or `mdb_reader_check`; the environment is closed
    ///   again when opening fails.
    ///   - driveFlush: what runs after each committed write transaction (default
    ///     ``DriveFlushChoice/platform``: `F_FULLFSYNC` for ``SyncMode/full`` on Darwin).
    package init(path: String, mapSize: Int, maxDatabases: Int, maxReaders: Int = 126, sync: SyncMode, readOnly: Bool = false,
                 driveFlush: DriveFlushChoice = .platform) throws(LMDBError) {
        precondition(maxReaders >= 1 && maxReaders <= 100_000, "maxReaders must be 1 ... 100000, not \(maxReaders)")
        let dataPath = path + "/data.mdb"
        let lockPath = path + "/lock.mdb"
        let dataExisted = access(dataPath, F_OK) == 0
        let lockExisted = access(lockPath, F_OK) == 0
        /// Removes what this call created, so a failed open leaves the directory as it was.
        /// A `data.mdb` that already holds both meta pages may be another process's new store
        /// (created since the check above): it stays, and so does the lock file beside it.
        func removeCreated() {
            var info = stat()
            if !dataExisted, stat(dataPath, &info) == 0, Int(info.st_size) < 2 * Int(sysconf(Int32(_SC_PAGESIZE))) {
                unlink(dataPath)
            }
            if !lockExisted, dataExisted || access(dataPath, F_OK) != 0 { unlink(lockPath) }
        }
        do {
            try Self.reserveLockFile(lockPath, maxReaders: maxReaders)
            // A new data.mdb appears complete or not at all (Environment+Create.swift).
            if !readOnly { Self.removeStaleStagingFiles(in: path) }
            if !dataExisted, !readOnly { try Self.createDataFile(in: path, mapSize: mapSize) }
        } catch {
            removeCreated()
            throw error
        }
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
            try check(mdb_env_set_maxreaders(env, UInt32(maxReaders)), "mdb_env_set_maxreaders")
            try check(mdb_env_open(env, path, flags, 0o600), "mdb_env_open")
            var dead: Int32 = 0
            try check(mdb_reader_check(env, &dead), "mdb_reader_check")
        } catch {
            // LMDB doc: "If this function fails, mdb_env_close() must be called to discard the handle."
            mdb_env_close(env)
            removeCreated()
            throw error
        }
        self.handle = env
        self.path = path
        self.lockProbe = open(lockPath, (readOnly ? O_RDONLY : O_RDWR) | O_CLOEXEC)
        switch driveFlush {
        case .platform: self.driveFlush = Self.defaultDriveFlush(for: sync)
        case .custom(let flush): self.driveFlush = flush
        }
    }

    /// The size LMDB gives `lock.mdb` for `maxReaders` slots (`mdb_env_setup_locks` in LMDB
    /// 0.9: one `MDB_txninfo` — two 64-byte cache lines and the first reader — plus one
    /// 64-byte `MDB_reader` per further slot). A larger file only means more slots.
    static func lockFileSize(maxReaders: Int) -> Int { (maxReaders - 1) * 64 + 192 }

    /// Creates `lock.mdb` (owner-only) when missing and allocates its blocks, so LMDB's later
    /// writes through its memory map cannot meet a full disk (which would be `SIGBUS`).
    private static func reserveLockFile(_ lockPath: String, maxReaders: Int) throws(LMDBError) {
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if fd < 0 {
            let code = errno
            // A read-only directory with an existing lock file is LMDB's to judge.
            if code == EACCES || code == EROFS, access(lockPath, F_OK) == 0 { return }
            throw LMDBError(code: code, function: "open(\(lockPath))")
        }
        defer { closeDescriptor(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw LMDBError(code: errno, function: "fstat(\(lockPath))") }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return }  // not a file: LMDB reports it
        let wanted = max(Int(info.st_size), lockFileSize(maxReaders: maxReaders))
        #if os(Linux)
        // posix_fallocate returns the error number instead of setting errno.
        let rc = posix_fallocate(fd, 0, off_t(wanted))
        // EOPNOTSUPP/EINVAL: a file system without fallocate; LMDB then works as it always did.
        if rc != 0 && rc != EOPNOTSUPP && rc != EINVAL {
            throw LMDBError(code: rc, function: "posix_fallocate(\(lockPath))")
        }
        #endif
    }

    /// Closes the environment (`mdb_env_close`), first waiting until every transaction and
    /// call already running on another thread has ended; every call after it throws
    /// ``LMDBError/closed``. Calling it twice is harmless.
    ///
    /// LMDB's `mdb_env_close` unmaps the file and frees the handle: "all transactions,
    /// databases, and cursors must already be closed before calling this function"
    /// (<http://www.lmdb.tech/doc/group__mdb.html#ga4366c43ada8874588b6a62fbda2d1e95>). A
    /// store's close raced with a read of its mutation sender (a SEGV in `mdb_cursor_open`
    /// under AddressSanitizer; docs/architecture.md, "Closing"), hence the wait.
    /// Must not be called inside ``read(_:)`` or ``write(_:)`` of this environment (it would
    /// wait for itself).
    package func close() {
        gate.exclusive {
            guard !isClosed else { return }
            isClosed = true
            mdb_env_close(handle)
            if lockProbe >= 0 { closeDescriptor(lockProbe) }
        }
    }

    /// Whether another process has this environment open now: every process that opens it
    /// holds a shared `fcntl` lock on byte 0 of `lock.mdb` while it is open (LMDB 0.9,
    /// `mdb_env_excl_lock`), and `F_GETLK` reports another process's lock that a write lock on
    /// that byte would meet (this process's own locks never conflict). nil when it cannot be
    /// told (no descriptor of `lock.mdb`, or `fcntl` failed). Inside a write transaction the
    /// answer holds until it commits for any process that would open the environment and then
    /// write: its first write transaction waits for this one.
    package func isSharedWithOtherProcesses() -> Bool? {
        guard lockProbe >= 0 else { return nil }
        var lock = LockFileByte.exclusive()
        guard fcntl(lockProbe, F_GETLK, &lock) == 0 else { return nil }
        return lock.l_type != Int16(F_UNLCK)
    }

    /// Called when ``close()`` (or a map resize) has to wait for transactions running on
    /// other threads; for tests. Set it before the environment is shared between threads.
    package var onWaitForTransactions: (@Sendable () -> Void)? {
        get { gate.onExclusiveWait }
        set { gate.onExclusiveWait = newValue }
    }

    /// Runs `body` with the gate held shared, after checking the environment is open: every
    /// use of `handle` goes through here (or holds the gate exclusive), so none can meet a
    /// handle that ``close()`` freed.
    /// - Throws: ``LMDBError/closed`` after ``close()``, or whatever `body` throws.
    private func whileOpen<R, E: Error>(_ body: () throws(E) -> R) throws -> R {
        try gate.shared { () throws -> R in
            guard !isClosed else { throw LMDBError.closed }
            return try body()
        }
    }

    /// ``whileOpen(_:)`` for a body that throws only ``LMDBError``.
    private func whileOpenLMDB<R>(_ body: () throws(LMDBError) -> R) throws(LMDBError) -> R {
        try gate.shared { () throws(LMDBError) -> R in
            guard !isClosed else { throw LMDBError.closed }
            return try body()
        }
    }

    deinit { close() }

    /// Runs `body` in a read-only transaction (a consistent snapshot) and ends it.
    ///
    /// When the reader table is full (`MDB_READERS_FULL`), stale slots are cleared with
    /// ``clearStaleReaders()`` and the transaction is begun once more.
    /// - Throws: ``LMDBError`` from `mdb_txn_begin` (``LMDBError/readersFull`` when the table
    ///   is still full: that many live readers), or whatever `body` throws.
    @available(*, noasync, message: "an LMDB transaction must not cross an await")
    package func read<R, E: Error>(_ body: (borrowing Transaction) throws(E) -> R) throws -> R {
        try adoptingMapResize {
            try whileOpen { () throws -> R in try readUngated(body) }
        }
    }

    private func readUngated<R, E: Error>(_ body: (borrowing Transaction) throws(E) -> R) throws -> R {
        var txn: OpaquePointer?
        var rc = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn)
        if rc == MDB_READERS_FULL {
            // Slots held by processes that died mid-read fill the table: clear them, try once more.
            _ = try clearStaleReaders()
            rc = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn)
        }
        try check(rc, "mdb_txn_begin(read-only)")
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
    /// is aborted and nothing it wrote is kept. Stale reader slots are cleared first
    /// (``clearStaleReaders()``).
    ///
    /// LMDB allows one write transaction at a time per environment; a second caller blocks.
    /// - Throws: ``LMDBError`` from `mdb_txn_begin` or `mdb_txn_commit` (for example
    ///   ``LMDBError/mapFull``), or whatever `body` throws.
    @available(*, noasync, message: "an LMDB transaction must not cross an await")
    package func write<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        try adoptingMapResize {
            try whileOpen { () throws -> R in try writeUngated(body) }
        }
    }

    private func writeUngated<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        // A process that died holding a read transaction pins every page freed since its
        // snapshot, so the file would grow with each commit while it lasts. Clearing such
        // slots before each write transaction costs a scan of the reader table and one
        // `fcntl(F_GETLK)` per other process that has a slot (LMDB's `mdb_reader_check`).
        _ = try clearStaleReaders()
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
        if let driveFlush { try flushDrive(driveFlush) }
        return result
    }

    /// Runs `attempt` (which begins a transaction); when another process grew the map beyond
    /// this one's (`MDB_MAP_RESIZED` from `mdb_txn_begin`), adopts the new size
    /// (`mdb_env_set_mapsize` with 0) and runs it once more.
    private func adoptingMapResize<R>(_ attempt: () throws -> R) throws -> R {
        do {
            return try attempt()
        } catch LMDBError.mapResized {
            try setMapSize(0)
            return try attempt()
        }
    }

    /// Sets the map size in bytes (`mdb_env_set_mapsize`), waiting until no transaction of
    /// this process is open; 0 adopts the size another process set. LMDB keeps the larger of
    /// the size asked for and the file's size. Other processes adopt a larger map when they
    /// next begin a transaction.
    /// - Throws: ``LMDBError`` from `mdb_env_set_mapsize` (`EINVAL` for a size LMDB refuses).
    package func setMapSize(_ bytes: Int) throws(LMDBError) {
        try gate.exclusive { () throws(LMDBError) in
            guard !isClosed else { throw LMDBError.closed }
            try check(mdb_env_set_mapsize(handle, bytes), "mdb_env_set_mapsize")
        }
    }

    /// Runs `flush` on `data.mdb`'s descriptor (`mdb_env_get_fd`); when it fails (a file
    /// system without `F_FULLFSYNC` answers `ENOTSUP` or `EINVAL`), falls back to `fsync`.
    /// - Throws: ``LMDBError`` with `fsync`'s `errno` when the fallback fails too: the
    ///   transaction is committed, but not known to be on stable storage.
    private func flushDrive(_ flush: DriveFlush) throws(LMDBError) {
        var fd: Int32 = -1
        try check(mdb_env_get_fd(handle, &fd), "mdb_env_get_fd")
        guard flush(fd) != 0 else { return }
        guard fsync(fd) == 0 else { throw LMDBError(code: errno, function: "fsync after a failed drive flush") }
    }

    /// Opens (or, in a write transaction with `create`, creates) the named database.
    /// Handles stay valid until the environment closes; they are never closed one by one.
    package func openDatabase(_ name: String, create: Bool) throws -> Database {
        try write { txn in try txn.openDatabase(name, create: create) }
    }

    /// Copies the environment to `path` (an existing empty directory), compacting free pages
    /// (`mdb_env_copy2` with `MDB_CP_COMPACT`).
    package func copyCompacted(to path: String) throws(LMDBError) {
        try whileOpenLMDB { () throws(LMDBError) in try check(mdb_env_copy2(handle, path, UInt32(MDB_CP_COMPACT)), "mdb_env_copy2") }
    }

    /// Clears reader slots whose process has died (`mdb_reader_check`) and returns how many.
    ///
    /// A process killed inside a read transaction leaves its slot behind; until it is
    /// cleared, the writer cannot reuse pages freed after that reader's snapshot (the file
    /// grows) and the slot counts against the reader table (`MDB_READERS_FULL`).
    /// See <http://www.lmdb.tech/doc/group__mdb.html#ga366923d08bb384b3d9580a98edf5d6ac>.
    package func clearStaleReaders() throws(LMDBError) -> Int {
        try whileOpenLMDB { () throws(LMDBError) -> Int in
            var dead: Int32 = 0
            try check(mdb_reader_check(handle, &dead), "mdb_reader_check")
            return Int(dead)
        }
    }

    /// The number of used reader slots (`mdb_env_info`'s `me_numreaders`: the high-water mark
    /// of slots in use, live or stale).
    package func readerSlots() throws(LMDBError) -> Int {
        try whileOpenLMDB { () throws(LMDBError) -> Int in
            var info = MDB_envinfo()
            try check(mdb_env_info(handle, &info), "mdb_env_info")
            return Int(info.me_numreaders)
        }
    }

    /// Flushes the data buffers to disk (`mdb_env_sync` with force).
    package func sync() throws(LMDBError) {
        try whileOpenLMDB { () throws(LMDBError) in try check(mdb_env_sync(handle, 1), "mdb_env_sync") }
    }

    /// Size facts about the environment: (map size in bytes, last used page number, page size in bytes).
    package func info() throws(LMDBError) -> (mapSize: Int, lastPage: Int, pageSize: Int) {
        try whileOpenLMDB { () throws(LMDBError) -> (mapSize: Int, lastPage: Int, pageSize: Int) in
            var info = MDB_envinfo()
            try check(mdb_env_info(handle, &info), "mdb_env_info")
            var stat = MDB_stat()
            try check(mdb_env_stat(handle, &stat), "mdb_env_stat")
            return (info.me_mapsize, info.me_last_pgno, Int(stat.ms_psize))
        }
    }
}

/// `close(2)`, reachable from inside ``Environment`` (whose own `close()` hides the C name).
private func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}
