import Foundation
import Synchronization

/// The stores open in this process, by file identity (device and inode of the directory and
/// of its `data.mdb` and `lock.mdb`), so a second spelling of the same store — a symlink, a
/// bind mount, `dir/../dir`, a hard-linked `data.mdb` — is recognised too. LMDB forbids
/// opening one environment twice in a process (its locks are per process: a second
/// `mdb_env_open` and its close would release the first one's locks), so a second `Store`
/// on the same files fails instead.
enum OpenDirectories {
    private static let open = Mutex<Set<StoreFiles.Identity>>([])

    /// Claims every identity in `identities`; false (claiming none) when any is open already.
    static func claim(_ identities: Set<StoreFiles.Identity>) -> Bool {
        open.withLock { claimed in
            guard claimed.isDisjoint(with: identities) else { return false }
            claimed.formUnion(identities)
            return true
        }
    }

    /// Adds identities to a claim already made (the files a new store just created).
    static func extend(_ identities: Set<StoreFiles.Identity>) {
        open.withLock { $0.formUnion(identities) }
    }

    static func release(_ identities: Set<StoreFiles.Identity>) {
        open.withLock { $0.subtract(identities) }
    }
}
