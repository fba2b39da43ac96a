import Foundation
import Synchronization

/// The store directories open in this process. LMDB forbids opening one environment twice
/// in a process (its locks are per process: a second `mdb_env_open` would corrupt them), so
/// a second `Store` on the same directory fails instead.
enum OpenDirectories {
    private static let paths = Mutex<Set<String>>([])

    /// Claims `path` (a resolved absolute path); false when it is already open.
    static func claim(_ path: String) -> Bool {
        paths.withLock { $0.insert(path).inserted }
    }

    static func release(_ path: String) {
        _ = paths.withLock { $0.remove(path) }
    }
}
