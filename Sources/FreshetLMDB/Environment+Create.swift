internal import CLMDB
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Environment {
    /// Creates `path/data.mdb` complete — both meta pages written and flushed — or not at all.
    ///
    /// `mdb_env_open` creates `data.mdb` (`open(O_CREAT)`) and only then writes its meta pages,
    /// so a process killed in between leaves an empty `data.mdb`, which is refused on every later
    /// open (an empty file is not a store; `StoreFiles.check`). Instead the file is made under a
    /// staging name (`data.mdb.creating-PID`, opened `MDB_NOSUBDIR | MDB_NOLOCK`: no lock file to
    /// map), flushed (`mdb_env_sync`), and `link(2)`ed to `data.mdb`, which fails with `EEXIST`
    /// rather than replace a store another process created meanwhile; the staging name is then
    /// removed, and so is one a killed earlier attempt left. Found by `make stress`
    /// (docs/reliability.md, "Stress").
    ///
    /// - Throws: ``LMDBError`` from `mdb_env_open` / `mdb_env_sync`, or `link` with its `errno`.
    static func createDataFile(in path: String, mapSize: Int) throws(LMDBError) {
        let staging = path + "/data.mdb.creating-\(getpid())"
        unlink(staging)
        defer { unlink(staging) }
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "mdb_env_create")
        guard let env else { throw LMDBError(code: EINVAL, function: "mdb_env_create") }
        do {
            try check(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize")
            try check(mdb_env_open(env, staging, UInt32(MDB_NOSUBDIR | MDB_NOLOCK), 0o600), "mdb_env_open")
            try check(mdb_env_sync(env, 1), "mdb_env_sync")
        } catch {
            mdb_env_close(env)
            throw error
        }
        mdb_env_close(env)
        guard link(staging, path + "/data.mdb") == 0 || errno == EEXIST else {
            throw LMDBError(code: errno, function: "link")
        }
        // The new name must survive a power cut too.
        let directory = open(path, O_RDONLY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            #if canImport(Glibc)
            Glibc.close(directory)
            #else
            Darwin.close(directory)
            #endif
        }
    }

    /// Removes `data.mdb.creating-PID` files whose process is gone (`kill(PID, 0)` is
    /// `ESRCH`): what ``createDataFile(in:mapSize:)`` left when its process was killed between
    /// making the staging file and removing it. A live process's file is left alone.
    static func removeStaleStagingFiles(in path: String) {
        guard let dir = opendir(path) else { return }
        defer { closedir(dir) }
        let prefix = "data.mdb.creating-"
        var stale: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasPrefix(prefix), let pid = Int32(name.dropFirst(prefix.count)) else { continue }
            if pid != getpid(), kill(pid, 0) != 0, errno == ESRCH { stale.append(name) }
        }
        for name in stale { unlink(path + "/" + name) }
    }
}
