import Foundation
import ProcessSupport
import Testing
@testable import Freshet
#if canImport(Glibc)
import Glibc
#endif

/// Issue 7 items 1 (owner-only files) and 8 (full disk, empty `data.mdb`, FIFO), and the
/// open-twice check by device and inode.
@Suite("Store files")
struct StoreFileTests {
    /// The names in `directory` with their sizes, sorted: what "left as it was" compares.
    static func listing(_ directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted().map { name in
            let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)
            return "\(name) \(attributes[.size] as? Int ?? -1)"
        }
    }

    static func mode(_ path: String) -> mode_t {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o777 : 0
    }

    /// Runs `freshet-store-helper create …` and returns its output line and exit status.
    static func createInChild(_ arguments: [String]) async throws -> (line: String, status: Int32) {
        let helper = try await StoreHelper(["create"] + arguments)
        let line = try await helper.nextLine()
        return (line, await helper.waitForExit())
    }

    @Test("a new store is owner-only: directory 0700, data.mdb and lock.mdb 0600")
    func ownerOnlyModes() async throws {
        try await withTemporaryDirectory { directory in
            let nested = directory.appendingPathComponent("app/store")
            let store = try Store(directory: nested, configuration: .test(), dependencies: .test())
            store.close()
            #expect(Self.mode(nested.path) == 0o700)
            #expect(Self.mode(nested.appendingPathComponent("data.mdb").path) == 0o600)
            #expect(Self.mode(nested.appendingPathComponent("lock.mdb").path) == 0o600)
        }
    }

    @Test("an empty data.mdb is refused with notAStore, writable or not, and left as it is", arguments: [true, false])
    func emptyDataFile(create: Bool) async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: directory.appendingPathComponent("data.mdb").path, contents: Data()))
            let error = #expect(throws: StoreError.self) {
                try Store(directory: directory, configuration: .test(), dependencies: .test(), create: create)
            }
            #expect(error?.code == .notAStore)
            #expect(error?.message.contains("\(directory.path)/data.mdb is empty") == true, "\(String(describing: error))")
            #expect(try Self.listing(directory) == ["data.mdb 0"])
        }
    }

    @Test("a FIFO named data.mdb is refused with notAStore at once, and freshet dump exits 2 instead of hanging", arguments: [true, false])
    func fifoDataFile(create: Bool) async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            #expect(mkfifo(directory.appendingPathComponent("data.mdb").path, 0o600) == 0)
            let error = #expect(throws: StoreError.self) {
                try Store(directory: directory, configuration: .test(), dependencies: .test(), create: create)
            }
            #expect(error?.code == .notAStore)
            #expect(error?.message == "\(directory.path)/data.mdb is not a regular file (a FIFO); a store's data.mdb must be one")
            let run = runTool(["dump", directory.path])
            #expect(run.status == 2)
            #expect(run.stdout == [])
            #expect(try Self.listing(directory) == ["data.mdb 0"])
        }
    }

    @Test("a full disk when a store is first created is diskFull naming the file, on every launch, and leaves no files behind")
    func fullDiskAtCreation() async throws {
        try await withTemporaryDirectory { scratch in
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            let mountPoint = scratch.appendingPathComponent("disk")
            try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
            // A 64 KiB tmpfs, filled: LMDB used to die with SIGBUS writing lock.mdb's map there.
            // Where mounting is not allowed, RLIMIT_FSIZE makes the same file creation fail.
            let mounted = Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", mountPoint.path]) == 0
            defer { if mounted { _ = Self.run("/bin/umount", [mountPoint.path]) } }
            if mounted {
                let filler = mountPoint.appendingPathComponent("filler")
                #expect(FileManager.default.createFile(atPath: filler.path, contents: Data(count: 64 * 1024)))
            }
            let target = mountPoint.appendingPathComponent("store")
            let before = try Self.listing(mountPoint)
            for launch in 1...2 {
                let (line, status) = try await Self.createInChild(mounted ? [target.path] : [target.path, "4096"])
                #expect(status == 3, "launch \(launch): \(line)")
                #expect(line.hasPrefix("error diskFull opening \(target.path): no space left for the store (posix_fallocate(\(target.path)/lock.mdb): "), "launch \(launch): \(line)")
                #expect(try Self.listing(mountPoint) == before, "launch \(launch)")
            }
        }
    }

    @Test("a directory this process may not write is permissionDenied naming the file, and left empty")
    func unwritableDirectory() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let asRoot = geteuid() == 0
            // Root ignores file modes: the child drops to `nobody`, for whom 0755 root-owned
            // is not writable; anyone else gets a 0500 directory.
            if !asRoot { #expect(chmod(directory.path, 0o500) == 0) }
            defer { chmod(directory.path, 0o700) }
            let (line, status) = try await Self.createInChild(asRoot ? [directory.path, "nobody"] : [directory.path])
            #expect(status == 3, "\(line)")
            #expect(line.hasPrefix("error permissionDenied opening \(directory.path): not allowed to write the store (open(\(directory.path)/lock.mdb): "), "\(line)")
            #expect(try Self.listing(directory) == [])
        }
    }

    @Test("a second directory holding a hard link to an open store's data.mdb is alreadyOpen, and left as it was")
    func hardLinkedDataFile() async throws {
        try await withTemporaryDirectory { directory in
            try await withTemporaryDirectory { other in
                let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
                defer { store.close() }
                try await store.localWrite("notes", [.upsert(row("a"))])
                try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
                #expect(link(directory.appendingPathComponent("data.mdb").path, other.appendingPathComponent("data.mdb").path) == 0)
                let before = try Self.listing(other)
                let error = #expect(throws: StoreError.self) {
                    try Store(directory: other, configuration: .test(), dependencies: .test())
                }
                #expect(error?.code == .alreadyOpen)
                #expect(try Self.listing(other) == before)
                #expect(try store.ids("notes") == ["a"])
            }
        }
    }

    /// Runs a program and returns its exit status (the signal's number when one killed it;
    /// -1 when it cannot start).
    static func run(_ path: String, _ arguments: [String]) -> Int32 {
        do {
            let child = try SpawnedProcess([path] + arguments, standardOutput: .discard, standardError: .discard)
            return child.wait().status
        } catch {
            return -1
        }
    }
}

extension StoreFileTests {
    @Test("a data.mdb holding something other than LMDB is notAStore, and the directory keeps only that file", arguments: [true, false])
    func garbageDataFile(create: Bool) async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let garbage = Data(repeating: 0x41, count: 10_000)
            #expect(FileManager.default.createFile(atPath: directory.appendingPathComponent("data.mdb").path, contents: garbage))
            let error = #expect(throws: StoreError.self) {
                try Store(directory: directory, configuration: .test(), dependencies: .test(), create: create)
            }
            #expect(error?.code == .notAStore)
            #expect(try Self.listing(directory) == ["data.mdb 10000"])
            #expect(try Data(contentsOf: directory.appendingPathComponent("data.mdb")) == garbage)
        }
    }
}
