import Foundation

/// An exclusive `flock(2)` on an import's target directory (created if missing).
struct ImportLock {
    let descriptor: Int32

    init(_ path: String) throws(ToolError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw ToolError(StoreError(.storage, "cannot create \(path): \(error.localizedDescription)"))
        }
        descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw ToolError(StoreError(.storage, "cannot open \(path): \(String(cString: strerror(errno)))")) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw ToolError(.notEmpty, "\(path) is not empty: another import is writing a store there; nothing was written")
        }
    }

    func release() {
        close(descriptor)
    }
}
