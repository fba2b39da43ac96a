internal import CLMDB
import Foundation

/// Rewrites an environment's `data.mdb` without its free pages, for `freshet compact --vacuum`.
package enum Vacuum {
    /// Another process has the environment open. Raised as an ``LMDBError`` with `EBUSY` and
    /// this function name, so callers can tell it from LMDB's own failures.
    package static let busyFunction = "vacuum: lock.mdb is held by another process"

    /// Copies the environment in `directory` compacted (`mdb_env_copy2` with `MDB_CP_COMPACT`)
    /// to a temporary directory inside it, flushes the copy, and renames it over `data.mdb`
    /// (rename(2) is atomic: a crash leaves the old file or the new one). Returns the file's
    /// size in bytes before and after.
    ///
    /// Exclusion: every process that has an LMDB environment open holds a shared `fcntl` lock
    /// on byte 0 of `lock.mdb` (`mdb_env_excl_lock` in LMDB 0.9). This takes that byte's
    /// **exclusive** lock first, which succeeds only when no other process has the
    /// environment open, and holds it until the end, so a process that starts opening the
    /// store meanwhile waits. The copy is read with `MDB_NOLOCK` (LMDB leaves the lock file
    /// alone, so the exclusive lock stays), and before the lock is released the new file is
    /// opened once normally: as the only user LMDB resets `lock.mdb` for it (its transaction
    /// ID), so a waiting process meets a consistent lock file. The caller must not have the
    /// environment open in this process (closing any of this process's descriptors of
    /// `lock.mdb` would drop the lock: POSIX `fcntl` semantics).
    ///
    /// - Throws: ``LMDBError`` with `EBUSY` and ``busyFunction`` when another process has the
    ///   environment open; other ``LMDBError``s for failures of open(2), fcntl(2),
    ///   `mdb_env_*`, fsync(2) or rename(2) (the old file is then untouched; a temporary
    ///   directory `.vacuum-*` may be left behind and is removed by the next vacuum).
    package static func run(directory: String) throws(LMDBError) -> (before: Int, after: Int) {
        let lockPath = directory + "/lock.mdb"
        let dataPath = directory + "/data.mdb"
        removeLeftovers(in: directory)
        let lfd = open(lockPath, O_RDWR | O_CLOEXEC)
        guard lfd >= 0 else { throw LMDBError(code: errno, function: "open(\(lockPath))") }
        defer { _ = close(lfd) }
        var lock = LockFileByte.exclusive()
        var rc: Int32
        repeat { rc = fcntl(lfd, F_SETLK, &lock) } while rc != 0 && errno == EINTR
        if rc != 0 {
            let code = errno
            if code == EAGAIN || code == EACCES { throw LMDBError(code: EBUSY, function: busyFunction) }
            throw LMDBError(code: code, function: "fcntl(F_SETLK, \(lockPath))")
        }
        let before = fileSize(dataPath)
        var template = Array((directory + "/.vacuum-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw LMDBError(code: errno, function: "mkdtemp(\(directory))") }
        let temporary = String(cString: made)
        defer {
            _ = unlink(temporary + "/data.mdb")
            _ = rmdir(temporary)
        }
        // The copy, read without the lock file.
        try withEnvironment(directory, flags: UInt32(MDB_NOLOCK | MDB_RDONLY)) { env throws(LMDBError) in
            try check(mdb_env_copy2(env, temporary, UInt32(MDB_CP_COMPACT)), "mdb_env_copy2")
        }
        let copy = temporary + "/data.mdb"
        let cfd = open(copy, O_RDWR | O_CLOEXEC)
        guard cfd >= 0 else { throw LMDBError(code: errno, function: "open(\(copy))") }
        let synced = fchmod(cfd, 0o600) == 0 && fsync(cfd) == 0
        let syncError = errno
        _ = close(cfd)
        guard synced else { throw LMDBError(code: syncError, function: "fsync(\(copy))") }
        guard rename(copy, dataPath) == 0 else { throw LMDBError(code: errno, function: "rename(\(copy), \(dataPath))") }
        let dfd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            _ = fsync(dfd)
            _ = close(dfd)
        }
        // Open the new file once as the only user: LMDB resets lock.mdb for it. Closing it
        // releases this process's locks on lock.mdb; a waiting opener then goes on.
        try withEnvironment(directory, flags: UInt32(MDB_NOTLS)) { _ throws(LMDBError) in }
        return (before, fileSize(dataPath))
    }

    private static func withEnvironment(_ path: String, flags: UInt32, _ body: (OpaquePointer) throws(LMDBError) -> Void) throws(LMDBError) {
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "mdb_env_create")
        guard let env else { throw LMDBError(code: EINVAL, function: "mdb_env_create") }
        defer { mdb_env_close(env) }
        try check(mdb_env_set_maxdbs(env, 32), "mdb_env_set_maxdbs")
        try check(mdb_env_open(env, path, flags, 0o600), "mdb_env_open")
        try body(env)
    }

    private static func fileSize(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    /// Removes `.vacuum-*` directories a killed vacuum left (their copy never replaced
    /// anything, but it holds a copy of the rows: sign-out calls this too). Call it only while
    /// holding the exclusive lock on `lock.mdb`, so no vacuum is running.
    package static func removeLeftovers(in directory: String) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            return  // unreadable: the lock or the copy will report why
        }
        for name in names where name.hasPrefix(".vacuum-") {
            _ = unlink(directory + "/" + name + "/data.mdb")
            _ = rmdir(directory + "/" + name)
        }
    }
}
