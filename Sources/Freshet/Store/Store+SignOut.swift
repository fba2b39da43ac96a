import Foundation
import FreshetLMDB

extension Store {
    /// Erases the signed-in user's data: every row, log record, queued mutation and SyncMark.
    /// Afterwards the store's files hold none of it — `data.mdb` is not cleared in place
    /// (LMDB keeps freed pages, with their old bytes, for reuse) but replaced by a new, empty
    /// file; `lock.mdb` holds only LMDB's reader table. The new store continues the LSNs: its
    /// log starts with a `checkpoint` record through the old last LSN, with no entries (so
    /// `verify` and `replay` start there and see no gap, and LSNs never go backwards for
    /// exports and other processes); it keeps the format version, nothing else.
    ///
    /// The store is closed by this call (observations end, the mutation queue stops);
    /// open a new ``Store`` on the same directory for the next user.
    ///
    /// No other process may have the store open: LMDB holds a shared `fcntl` lock on the
    /// first byte of `lock.mdb` in every process that has the environment open
    /// (`mdb_env_setup_locks`), and this call takes that byte's exclusive lock for the
    /// rewrite, so another process's `mdb_env_open` waits until it is done.
    ///
    /// - Parameter force: erase even when mutations are still waiting to be sent (they are
    ///   then lost; the report lists them).
    /// - Returns: what was erased.
    /// - Throws: ``StoreError/mutationsPending`` (nothing erased, the store stays open) when
    ///   mutations are pending and `force` is false — the message says how many;
    ///   ``StoreError/locked`` when another process has the store open (nothing erased; the
    ///   store is closed); ``StoreError/closed``; ``StoreError/permissionDenied``,
    ///   ``StoreError/diskFull`` or ``StoreError/storage`` when the files cannot be replaced.
    @discardableResult
    public func signOut(force: Bool = false) throws(StoreError) -> SignOutReport {
        try checkOpen()
        let pending = try pendingMutations()
        if !pending.isEmpty, !force {
            let ids = pending.map(\.id.description).joined(separator: ", ")
            throw StoreError(.mutationsPending, "\(pending.count) mutation\(pending.count == 1 ? " is" : "s are") still waiting to be sent (\(ids)); send them first or sign out with force: true to discard them")
        }
        let counted: (events: Int, collections: [String], last: LSN)
        do {
            counted = try env.read { txn in (try txn.count(state.dbs.log), try state.collections(in: txn), try state.dbs.lastLSN(in: txn)) }
        } catch {
            throw StoreError(error, doing: "reading \(directory.path) before signing out")
        }
        let path = directory.path
        close()
        try Self.replaceWithEmptyStore(path: path, lastLSN: counted.last, erased: counted.events, configuration: configuration, dependencies: dependencies)
        return SignOutReport(erasedEvents: counted.events, erasedCollections: counted.collections, discardedMutations: pending.map(\.id))
    }

    /// With the store closed in this process: takes the exclusive lock on `lock.mdb`'s first
    /// byte (failing when another process has the environment open), removes `data.mdb`,
    /// syncs the directory, and creates a new store there whose log starts after `lastLSN`
    /// (``startLog(after:time:carried:)``, with `erased` as the checkpoint's removed count).
    static func replaceWithEmptyStore(path: String, lastLSN: LSN, erased: Int, configuration: Configuration, dependencies: Dependencies) throws(StoreError) {
        let lockPath = path + "/lock.mdb"
        let fd = open(lockPath, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw StoreFiles.error(errno, "cannot open \(lockPath)") }
        // Closing any descriptor of lock.mdb drops this process's fcntl locks on it, LMDB's
        // included; the store is closed, and the new one below is closed before this is.
        defer { closeDescriptor(fd) }
        var lock = LockFileByte.exclusive()
        guard fcntl(fd, F_SETLK, &lock) == 0 else {
            let code = errno
            if code == EAGAIN || code == EACCES {
                throw StoreError(.locked, "\(path) is open in another process; close it there before signing out (nothing was erased)")
            }
            throw StoreFiles.error(code, "cannot lock \(lockPath)")
        }
        let dataPath = path + "/data.mdb"
        guard unlink(dataPath) == 0 else { throw StoreFiles.error(errno, "cannot remove \(dataPath)") }
        // A vacuum killed mid-copy leaves `.vacuum-*/data.mdb`, a full copy of the rows.
        Vacuum.removeLeftovers(in: path)
        // The removal itself must reach the disk: sync the directory (fsync(2) on Linux).
        let dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dir >= 0 else { throw StoreFiles.error(errno, "cannot open \(path) to sync it") }
        let synced = fsync(dir) == 0 ? 0 : errno
        closeDescriptor(dir)
        guard synced == 0 else { throw StoreFiles.error(synced, "cannot sync \(path)") }
        var fresh = configuration
        fresh.sendsMutations = false
        fresh.externalChangeCheckInterval = nil
        let store = try Store(directory: URL(fileURLWithPath: path), configuration: fresh, dependencies: dependencies)
        defer { store.close() }
        if lastLSN > .zero {
            try store.startLog(after: lastLSN, time: dependencies.now(), carried: erased)
        }
    }
}

/// `close(2)`, reachable from inside ``Store`` (whose own `close()` hides the C name).
private func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}
