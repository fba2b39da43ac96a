import Foundation
import Synchronization
import Testing
import FreshetLMDB
#if canImport(Glibc)
import Glibc
#endif

/// Issue 12 item 7: on Darwin, `.full` durability adds `fcntl(F_FULLFSYNC)` after LMDB's
/// sync. The path runs here on Linux through the ``Environment/DriveFlush`` seam.
@Suite("Drive flush after commit")
struct DriveFlushTests {
    static func withEnvironment(_ flush: Environment.DriveFlush?, _ body: (Environment, String) throws -> Void) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("freshet-flush-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let env = try Environment(path: path, mapSize: 1 << 24, maxDatabases: 2, sync: .full, driveFlush: .custom(flush))
        defer { env.close() }
        try body(env, path)
    }

    @Test("the flush runs once after each committed write transaction, on data.mdb's descriptor, and never for a read or an aborted write")
    func runsAfterEachCommit() throws {
        let calls = Mutex<[Int32]>([])
        try Self.withEnvironment({ fd in calls.withLock { $0.append(fd) }; return 0 }) { env, path in
            let db = try env.openDatabase("d", create: true)
            for i in 0..<3 { try env.write { txn in try txn.put(db, key: [UInt8(i)], value: [1]) } }
            _ = try env.read { txn in try txn.get(db, key: [0]) }
            struct Abort: Error {}
            #expect(throws: Abort.self) { try env.write { _ in throw Abort() } }
            let fds = calls.withLock { $0 }
            #expect(fds.count == 4)  // openDatabase's write, then three puts
            var seen = stat(), data = stat()
            #expect(fstat(fds[0], &seen) == 0)
            #expect(stat(path + "/data.mdb", &data) == 0)
            #expect(seen.st_ino == data.st_ino)
            #expect(seen.st_dev == data.st_dev)
        }
    }

    @Test("fcntlDriveFlush answers 0 for a command that succeeds, and when it fails (EINVAL, as F_FULLFSYNC on a file system without it) the commit falls back to fsync and stands")
    func failedFlushFallsBackToFsync() throws {
        try Self.withEnvironment(Environment.fcntlDriveFlush(command: F_GETFD)) { env, _ in
            let db = try env.openDatabase("d", create: true)
            try env.write { txn in try txn.put(db, key: [1], value: [2]) }
        }
        let failing = Environment.fcntlDriveFlush(command: -1)
        #expect(failing(0) == EINVAL)
        try Self.withEnvironment(failing) { env, _ in
            let db = try env.openDatabase("d", create: true)
            try env.write { txn in try txn.put(db, key: [1], value: [2]) }
            #expect(try env.read { txn in try txn.get(db, key: [1]) } == [2])
        }
    }

    @Test("the platform default is F_FULLFSYNC for full durability on Darwin only; here, on Linux, there is none for any mode")
    func platformDefault() {
        #if canImport(Darwin)
        #expect(Environment.defaultDriveFlush(for: .full) != nil)
        #else
        #expect(Environment.defaultDriveFlush(for: .full) == nil)
        #endif
        #expect(Environment.defaultDriveFlush(for: .noMetaSync) == nil)
        #expect(Environment.defaultDriveFlush(for: .noSync) == nil)
    }
}
