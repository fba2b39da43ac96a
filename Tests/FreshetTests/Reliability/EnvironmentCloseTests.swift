import Foundation
import Synchronization
import Testing
import FreshetLMDB
@testable import Freshet

/// `Environment.close()` against transactions on other threads. A store's close raced with
/// a read of its mutation sender: `mdb_env_close` unmapped the file under the open read
/// transaction (a SEGV in `mdb_cursor_open`, seen under AddressSanitizer in
/// `PushFoldTests`). Close now waits for every running transaction, and calls after it
/// throw `LMDBError.closed`.
@Suite("Closing an environment while another thread reads")
struct EnvironmentCloseTests {
    static func withEnvironment(_ body: (Environment, Database) throws -> Void) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("freshet-close-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let env = try Environment(path: path, mapSize: 1 << 24, maxDatabases: 2, sync: .noSync)
        defer { env.close() }
        let db = try env.openDatabase("rows", create: true)
        try env.write { txn in try txn.put(db, key: [1], value: [2, 3]) }
        try body(env, db)
    }

    /// What happened first once the reader sat inside its transaction and close was called.
    enum FirstEvent: Equatable { case closeWaits, closeReturned }

    @Test("close waits for a read transaction running on another thread; the read still sees its snapshot")
    func closeWaitsForRead() throws {
        try Self.withEnvironment { env, db in
            let inside = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let progress = DispatchSemaphore(value: 0)
            let first = Mutex<FirstEvent?>(nil)
            env.onWaitForTransactions = {
                first.withLock { if $0 == nil { $0 = .closeWaits } }
                progress.signal()
            }
            let read = Mutex<Result<[UInt8]?, LMDBErrorBox>?>(nil)
            let readerDone = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                let result = Result<[UInt8]?, any Error> {
                    try env.read { txn -> [UInt8]? in
                        inside.signal()
                        release.wait()
                        // Reads the map after close was asked for: unmapped memory before the fix.
                        return try txn.withValue(db, key: [1]) { Array($0) }
                    }
                }
                read.withLock { $0 = result.mapError { LMDBErrorBox(description: "\($0)") } }
                readerDone.signal()
            }
            inside.wait()
            let closed = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                env.close()
                first.withLock { if $0 == nil { $0 = .closeReturned } }
                progress.signal()
                closed.signal()
            }
            progress.wait()
            #expect(first.withLock { $0 } == .closeWaits)
            release.signal()
            readerDone.wait()
            closed.wait()
            #expect(read.withLock { $0 } == .success([2, 3]))
        }
    }

    @Test("every call after close throws LMDBError.closed, with its own message; closing twice is harmless")
    func callsAfterClose() throws {
        try Self.withEnvironment { env, db in
            env.close()
            env.close()
            #expect(throws: LMDBError.closed) { try env.read { txn in try txn.withValue(db, key: [1]) { Array($0) } } }
            #expect(throws: LMDBError.closed) { try env.write { txn in try txn.put(db, key: [4], value: [5]) } }
            #expect(throws: LMDBError.closed) { try env.info() }
            #expect(throws: LMDBError.closed) { try env.sync() }
            #expect(throws: LMDBError.closed) { try env.clearStaleReaders() }
            #expect(throws: LMDBError.closed) { try env.readerSlots() }
            #expect(throws: LMDBError.closed) { try env.setMapSize(1 << 25) }
            #expect(LMDBError.closed.message == "the environment is closed")
            #expect(StoreError(LMDBError.closed, doing: "reading the pending mutations") == StoreError(.closed, "reading the pending mutations: the store is closed"))
        }
    }
}

/// An error's description, so a `Result` of it is `Equatable`.
struct LMDBErrorBox: Error, Equatable {
    var description: String
}
