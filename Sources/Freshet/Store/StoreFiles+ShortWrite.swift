import Foundation
import FreshetLMDB

extension StoreFiles {
    /// Wraps an error from a write transaction like `StoreError(_:doing:)`, except that
    /// LMDB's `EIO` becomes ``StoreError/diskFull`` when the store's file system is full or
    /// `data.mdb` has reached the process's file size limit.
    ///
    /// LMDB writes a commit's pages with `pwrite` and reports a write that stopped short as
    /// `EIO` (`mdb_page_flush`: "if (wres >= 0) rc = EIO"), so on a full disk, or at
    /// `RLIMIT_FSIZE`, a commit fails with `EIO` rather than `ENOSPC`/`EFBIG`. The commit is
    /// aborted either way: LMDB writes the meta page last, so nothing committed is lost.
    /// "Full" is judged after the failure: under 1 MiB free for this user (`statvfs`:
    /// `f_bavail`, or `f_bfree` for root, who may use the reserved blocks), or `data.mdb`
    /// within one page of `RLIMIT_FSIZE` (`getrlimit(2)`).
    /// `ENOSPC` and `EFBIG` (a write that began past the limit) are ``StoreError/diskFull``
    /// already; they get the same reason.
    static func writeError(_ error: any Error, doing what: String, directory: String) -> StoreError {
        let wrapped = StoreError(error, doing: what)
        guard wrapped.code == .storage || wrapped.code == .diskFull, let lmdb = error as? LMDBError,
              [EIO, ENOSPC, EFBIG].contains(lmdb.code), let reason = fullness(directory: directory) else { return wrapped }
        return StoreError(.diskFull, "\(what): no space left for the store (\(lmdb); \(reason))")
    }

    /// Why the store's files cannot grow, or nil when they seem able to.
    static func fullness(directory: String) -> String? {
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0 {
            var info = stat()
            // RLIM_INFINITY is the largest value: no file comes within a page of it.
            if stat(directory + "/data.mdb", &info) == 0, UInt64(info.st_size) + 4096 > UInt64(limit.rlim_cur) {
                return "data.mdb is \(info.st_size) bytes, at the file size limit RLIMIT_FSIZE of \(limit.rlim_cur) bytes"
            }
        }
        var fs = statvfs()
        guard statvfs(directory, &fs) == 0 else { return nil }
        let blocks = geteuid() == 0 ? UInt64(fs.f_bfree) : UInt64(fs.f_bavail)
        let free = blocks * UInt64(fs.f_frsize)
        return free < 1 << 20 ? "the file system holding \(directory) has \(free) bytes free" : nil
    }
}
