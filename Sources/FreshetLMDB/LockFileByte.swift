import Foundation

/// Byte 0 of an environment's `lock.mdb`: every process that has the environment open holds a
/// shared `fcntl` lock on it while it is open (LMDB 0.9, `mdb_env_excl_lock`), so an exclusive
/// lock on it succeeds, and a test for one finds no holder, only when no other process has the
/// environment open. Vacuum and sign-out take it; the format upgrade tests it.
package enum LockFileByte {
    /// An exclusive (`F_WRLCK`) `flock` on byte 0, for `fcntl` `F_SETLK` or `F_GETLK`.
    package static func exclusive() -> flock {
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 1
        return lock
    }
}
