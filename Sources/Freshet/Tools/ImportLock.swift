import Foundation

/// An exclusive `flock(2)` on an import's target directory, which it creates (and its missing
/// parents) owner-only, mode 0700, as the library creates a store's directory (README,
/// "owner-only"). It remembers what it created, so a failed import can remove exactly that.
struct ImportLock {
    let descriptor: Int32
    let path: String
    /// The directories this lock created, outermost first.
    let created: [String]

    /// Messages name the directory `shown` (the path as the caller gave it).
    init(_ path: String, shownAs shown: String) throws(ToolError) {
        self.path = path
        var missing: [String] = []
        var current = URL(fileURLWithPath: path)
        while current.path != "/", !FileManager.default.fileExists(atPath: current.path) {
            missing.insert(current.path, at: 0)
            current = current.deletingLastPathComponent()
        }
        var created: [String] = []
        for directory in missing {
            if mkdir(directory, 0o700) == 0 {
                created.append(directory)
            } else if errno != EEXIST {
                // (EEXIST: a racing import made it; it is that one's to remove.)
                let text = String(cString: strerror(errno))
                for made in created.reversed() { rmdir(made) }
                throw ToolError(StoreError(.storage, "cannot create \(shown): \(text)"))
            }
        }
        self.created = created
        descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            let text = String(cString: strerror(errno))
            for made in created.reversed() { rmdir(made) }
            throw ToolError(StoreError(.storage, "cannot open \(shown): \(text)"))
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw ToolError(.notEmpty, "\(shown) is not empty: another import is writing a store there; nothing was written")
        }
    }

    /// Removes the directories this lock created, innermost first; one that is not empty
    /// (another process's files) stays, as rmdir(2) leaves it.
    func removeCreatedDirectories() {
        for directory in created.reversed() { rmdir(directory) }
    }

    /// Removes the store files an import made in the (empty when locked) directory, then the
    /// directories this lock created: the directory is as it was before the import.
    func removeStore() {
        for name in ["data.mdb", "lock.mdb"] { unlink(path + "/" + name) }
        removeCreatedDirectories()
    }

    func release() {
        close(descriptor)
    }
}
