import Foundation

/// Files the tools open by name (`import`'s input, `why --svg`), with errors in the words of
/// strerror(3) (`cannot read x.jsonl: No such file or directory`), never Foundation's
/// localized texts.
enum ToolFile {
    /// A file that cannot be read or written; `message` is one line naming the path.
    struct Failure: Error {
        var message: String
    }

    /// The whole of `path` (`-`: standard input).
    /// - Throws: ``Failure`` `cannot read PATH: REASON` (missing, unreadable, a directory).
    static func read(_ path: String) throws(Failure) -> [UInt8] {
        guard path != "-" else { return try readAll(STDIN_FILENO, named: "standard input") }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure("cannot read", path, errno) }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            throw Failure(message: "cannot read \(path): it is a directory, not a JSON Lines file")
        }
        return try readAll(fd, named: path)
    }

    private static func readAll(_ fd: Int32, named name: String) throws(Failure) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { b in Foundation.read(fd, b.baseAddress, b.count) }
            if n > 0 {
                bytes.append(contentsOf: chunk[0..<n])
            } else if n == 0 {
                return bytes
            } else if errno != EINTR {
                throw failure("cannot read", name, errno)
            }
        }
    }

    /// Writes `text` through `path` as a shell redirect does: `open(2)` with
    /// `O_WRONLY|O_CREAT|O_TRUNC`, mode 0644 (less the umask) for a new file, symbolic links
    /// followed (a FIFO or a device is written to, not replaced).
    /// - Throws: ``Failure`` `cannot write PATH: REASON` (a directory, no permission, a full disk).
    static func write(_ text: String, to path: String) throws(Failure) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let code = errno
            if code == EISDIR { throw Failure(message: "cannot write \(path): it is a directory, not a file") }
            throw failure("cannot write", path, code)
        }
        let output = OutputWriter(fileDescriptor: fd)
        output.append(text)
        let code = output.flush()
        // close(2) can report a delayed write error (NFS, some full disks).
        let closed = close(fd) == 0 ? nil : errno
        if let code = code ?? closed { throw failure("cannot write", path, code) }
    }

    /// Whether `path` (symbolic links followed) is a directory.
    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Whether `path`, resolved as `open(2)` would (symbolic links, a dangling one too, `..`),
    /// is `directory` or inside it. `directory` must exist.
    static func isInside(_ path: String, directory: String) -> Bool {
        guard let root = realPath(directory) else { return false }
        let target = resolved(path)
        return target == root || target.hasPrefix(root == "/" ? "/" : root + "/")
    }

    /// `path` with every symbolic link and `..` resolved; for a path that does not exist, its
    /// resolved parent and last component (following a dangling link to where it points).
    private static func resolved(_ path: String) -> String {
        var current = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        // 40: the kernel's limit of links followed in one lookup (path_resolution(7)).
        for _ in 0..<40 {
            if let real = realPath(current) { return real }
            let url = URL(fileURLWithPath: current)
            let name = url.lastPathComponent
            guard let parent = realPath(url.deletingLastPathComponent().path) else { return current }
            let candidate = parent == "/" ? "/" + name : parent + "/" + name
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink(candidate, &buffer, Int(PATH_MAX))
            guard n > 0 else { return candidate }
            let link = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = link.hasPrefix("/") ? link : parent + "/" + link
        }
        return current
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func failure(_ doing: String, _ path: String, _ code: Int32) -> Failure {
        Failure(message: "\(doing) \(path): \(String(cString: strerror(code)))")
    }
}
