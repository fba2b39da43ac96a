import Foundation
import FreshetLMDB

extension Store {
    /// Rewrites the store's `data.mdb` without its free pages: LMDB never gives pages back to
    /// the file system, so after a compaction removed records the file keeps its size until
    /// it is vacuumed. The copy is made with `mdb_env_copy2(…, MDB_CP_COMPACT)` into a
    /// temporary directory inside `directory`, flushed, and renamed over `data.mdb` (atomic:
    /// a crash leaves the old file or the new one).
    ///
    /// Refused while any other process has the store open, detected with LMDB's own lock:
    /// every process with the environment open holds a shared `fcntl` lock on byte 0 of
    /// `lock.mdb`; the vacuum takes it exclusively (so it also keeps a process from opening
    /// the store until it is done). See docs/operations.md, "Compaction schedule".
    ///
    /// - Throws: ``StoreError/locked`` when another process has the store open;
    ///   ``StoreError/alreadyOpen`` when this process has (close the ``Store`` first);
    ///   ``StoreError/notAStore`` when `directory` holds no store; ``StoreError/storage``,
    ///   ``StoreError/diskFull`` or ``StoreError/permissionDenied`` when the copy or the
    ///   rename fails (the store is then untouched).
    public static func vacuum(directory: URL) throws(StoreError) -> VacuumReport {
        let path = directory.standardizedFileURL.path
        let shown = directory.relativePath // as the caller named it (Store.displayPath)
        guard try StoreFiles.identity(of: path) != nil else { throw StoreError(.notAStore, "\(shown) does not exist") }
        let identities = try StoreFiles.check(directory: path, create: false, shownAs: shown)
        guard OpenDirectories.claim(identities) else {
            throw StoreError(.alreadyOpen, "\(shown) is open in this process; close the Store before vacuuming it")
        }
        defer { OpenDirectories.release(identities) }
        do {
            let sizes = try Vacuum.run(directory: path)
            return VacuumReport(bytesBefore: sizes.before, bytesAfter: sizes.after)
        } catch where error.function == Vacuum.busyFunction {
            throw StoreError(.locked, "\(shown) is open in another process (it holds LMDB's lock on lock.mdb); close it, then vacuum again")
        } catch {
            throw StoreError(error, doing: "vacuuming \(shown)")
        }
    }
}
