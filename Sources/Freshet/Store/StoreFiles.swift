import Foundation

/// Checks made on a store directory's files before LMDB touches them, and the identities
/// (device and inode) that tell whether this process has the store open already.
enum StoreFiles {
    /// A file's identity: the device and inode numbers `stat(2)` reports. Two paths with the
    /// same identity name the same file (symlinks, bind mounts, `..` spellings, hard links).
    struct Identity: Hashable, Sendable, CustomStringConvertible {
        var device: UInt64
        var inode: UInt64
        var description: String { "device \(device) inode \(inode)" }
    }

    /// The identity of the file at `path` (symlinks followed), nil when there is none.
    /// - Throws: ``StoreError/permissionDenied`` or ``StoreError/storage`` when `stat` fails
    ///   for another reason than a missing file.
    static func identity(of path: String) throws(StoreError) -> (Identity, mode: mode_t, size: Int)? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            if code == ENOENT { return nil }
            throw error(code, "cannot stat \(path)")
        }
        return (Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)), info.st_mode, Int(info.st_size))
    }

    /// Checks the store files in `directory` and returns the identities that name the store:
    /// the directory's, and those of `data.mdb` and `lock.mdb` when they exist (a hard link
    /// to a data file from another directory is the same store).
    ///
    /// - Throws: ``StoreError/notAStore`` when `data.mdb` or `lock.mdb` is not a regular file
    ///   (a FIFO would make LMDB block in `read`), when `data.mdb` is empty (LMDB would
    ///   silently write a new store over it), or when `create` is false and there is no
    ///   `data.mdb`. Nothing is opened or changed.
    static func check(directory: String, create: Bool, shownAs shown: String? = nil) throws(StoreError) -> Set<Identity> {
        let named = shown ?? directory
        guard let dir = try identity(of: directory) else { throw StoreError(.notAStore, "\(named) does not exist") }
        guard (dir.mode & S_IFMT) == S_IFDIR else { throw StoreError(.notAStore, "\(named) is a file, not a store directory") }
        var identities: Set<Identity> = [dir.0]
        for name in ["data.mdb", "lock.mdb"] {
            let path = directory + "/" + name
            guard let file = try identity(of: path) else {
                if name == "data.mdb", !create { throw StoreError(.notAStore, "\(named) holds no Freshet store (no data.mdb)") }
                continue
            }
            guard (file.mode & S_IFMT) == S_IFREG else {
                throw StoreError(.notAStore, "\(named)/\(name) is not a regular file (\(kind(file.mode))); a store's \(name) must be one")
            }
            if name == "data.mdb", file.size == 0 {
                throw StoreError(.notAStore, "\(named)/\(name) is empty (0 bytes), not a store; it is left as it is (remove it to create a new store there)")
            }
            identities.insert(file.0)
        }
        return identities
    }

    /// Creates `path` owner-only (mode 0700; parents that are missing get the usual mode).
    /// - Returns: whether this call created it (false: it existed already).
    static func createDirectory(_ path: String) throws(StoreError) -> Bool {
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty, !FileManager.default.fileExists(atPath: parent) {
            do {
                try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
            } catch {
                let code = (error as NSError).domain == NSPOSIXErrorDomain ? Int32((error as NSError).code) : EACCES
                throw Self.error(code, "cannot create \(parent): \(error.localizedDescription)")
            }
        }
        guard mkdir(path, 0o700) == 0 else {
            let code = errno
            if code == EEXIST { return false }
            throw error(code, "cannot create \(path)")
        }
        return true
    }

    /// A ``StoreError`` for an `errno` value: full disk, permission, or another storage failure.
    static func error(_ code: Int32, _ what: String) -> StoreError {
        let text = String(cString: strerror(code))
        switch code {
        case ENOSPC, EFBIG, EDQUOT: return StoreError(.diskFull, "\(what): \(text)")
        case EACCES, EPERM, EROFS: return StoreError(.permissionDenied, "\(what): \(text)")
        default: return StoreError(.storage, "\(what): \(text) (errno \(code))")
        }
    }

    private static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFDIR: "a directory"
        case S_IFSOCK: "a socket"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFLNK: "a symbolic link"
        default: "mode \(String(mode, radix: 8))"
        }
    }
}
