import Foundation

/// An exclusive `flock(2)` on an import's target directory (created if missing).
struct ImportLock {
    let descriptor: Int32

    /// Messages name the directory `shown` (the path as the caller gave it).
    init(_ path: String, shownAs shown: String) throws(ToolError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw ToolError(StoreError(.storage, "cannot create \(shown): \(error.localizedDescription)"))
        }
        descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw ToolError(StoreError(.storage, "cannot open \(shown): \(String(cString: strerror(errno)))")) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw ToolError(.notEmpty, "\(shown) is not empty: another import is writing a store there; nothing was written")
        }
    }

    func release() {
        close(descriptor)
    }
}
