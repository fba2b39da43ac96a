import Foundation
import FreshetLMDB
import Testing
@testable import Freshet

/// Issue 7 item 8: every number read from disk or from a caller is checked; none can trap.
@Suite("Numbers from disk and from callers")
struct NumberLimitTests {
    /// Writes `bytes` under `key` of the store's `log` or `meta` database, as a damaged or
    /// hand-made store would hold them (through the package's LMDB wrapper, not the store).
    static func poke(_ directory: URL, _ body: (borrowing Transaction, StoreDatabases) throws -> Void) throws {
        let env = try Environment(path: directory.path, mapSize: 1 << 24, maxDatabases: StoreDatabases.names.count + 2, sync: .noSync)
        defer { env.close() }
        try env.write { txn in
            let dbs = try StoreDatabases.open(in: txn, create: false)
            try body(txn, dbs)
        }
    }

    @Test("a store whose last LSN is 2^64 - 2 appends one event at LSN 2^64 - 1, then refuses with logExhausted and stays readable across a reopen")
    func lsnExhausted() async throws {
        try await withTemporaryDirectory { directory in
            let first = try Store(directory: directory, configuration: .test(), dependencies: .test())
            try await first.localWrite("notes", [.upsert(row("a"))])
            first.close()
            try Self.poke(directory) { txn, dbs in
                try txn.put(dbs.meta, key: MetaKey.lastLSN, value: LSN(UInt64.max - 1).keyBytes)
            }

            for _ in 0..<2 {
                let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
                defer { store.close() }
                if store.lastLSN == LSN(UInt64.max - 1) {
                    #expect(try await store.localWrite("notes", [.upsert(row("b"))]) == LSN.max)
                }
                #expect(store.lastLSN == LSN.max)
                let error = await #expect(throws: StoreError.self) {
                    try await store.localWrite("notes", [.upsert(row("c"))])
                }
                #expect(error?.code == .logExhausted)
                #expect(error?.message == "the log of \(directory.path) has used its last LSN (18446744073709551615); nothing more can be appended")
                #expect(try store.ids("notes") == ["a", "b"])
                #expect(try store.allRecords().map(\.lsn) == [1, LSN.max])
            }
        }
    }

    @Test("a meta.lastLSN that is not 8 bytes makes opening fail with corruptRecord, not a wrong LSN")
    func malformedLastLSN() async throws {
        try await withTemporaryDirectory { directory in
            try Store(directory: directory, configuration: .test(), dependencies: .test()).close()
            try Self.poke(directory) { txn, dbs in
                try txn.put(dbs.meta, key: MetaKey.lastLSN, value: [1, 2, 3])
            }
            let error = #expect(throws: StoreError.self) {
                try Store(directory: directory, configuration: .test(), dependencies: .test())
            }
            #expect(error?.code == .corruptRecord)
            #expect(error?.message == "meta.lastLSN is 3 bytes instead of 8")
        }
    }

    @Test("a page index past 65,535 through append is refused with invalidEvent and nothing is appended", arguments: [65_536, Int(UInt32.max) - 1, Int.max])
    func hugePageIndex(index: Int) async throws {
        try await withTemporaryStore { store in
            let error = await #expect(throws: StoreError.self) {
                try await store.append(page(index, isLast: false, rows("1")), to: "pokemon")
            }
            #expect(error?.code == .invalidEvent)
            #expect(error?.message == "page index \(index) of pokemon is out of range 0 ... 65535")
            let notModified = await #expect(throws: StoreError.self) {
                try await store.append(.notModified(Event.NotModified(response: response(), page: index, basisLSN: nil)), to: "pokemon")
            }
            #expect(notModified?.code == .invalidEvent)
            #expect(store.lastLSN == .zero)
            // The largest allowed index folds without building anything unbounded.
            let lsn = try await store.append(page(65_535, isLast: true, rows("2")), to: "pokemon")
            #expect(lsn == 1)
            let mark = try store.snapshot("pokemon").syncMark
            #expect(mark?.pageCount == 65_536)
        }
    }

    @Test("a logged record holding a page index past the limit is reported unreadable, never folded")
    func hugePageIndexOnDisk() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            try await store.localWrite("notes", [.upsert(row("a"))])
            store.close()
            let forged = LogRecord(lsn: 2, timestamp: TestClock.now, collection: "pokemon", event: page(5_000_000_000, isLast: false, rows("1")))
            try Self.poke(directory) { txn, dbs in
                try txn.put(dbs.log, key: LSN(2).keyBytes, value: forged.encoded(), append: true)
            }
            let reopened = try Store(directory: directory, configuration: .test(), dependencies: .test(), create: false)
            defer { reopened.close() }
            var entries: [LogEntry] = []
            try reopened.readLog { entries.append($0); return true }
            #expect(entries.count == 2)
            guard case .unreadable(let lsn, let error) = entries.last else {
                Issue.record("LSN 2 decoded: \(String(describing: entries.last))")
                return
            }
            #expect(lsn == 2)
            #expect(error.code == .corruptRecord)
            #expect(error.message == "record at LSN 2: page index 5000000000 is out of range 0 ... 65535")
        }
    }
}

extension NumberLimitTests {
    @Test("a NaN or out-of-range date from a caller's clock is stored without trapping", arguments: [Double.nan, Double.infinity, -Double.infinity, 1e300])
    func datesThatDoNotFit(seconds: Double) async throws {
        let dependencies = Dependencies.test(now: { Date(timeIntervalSince1970: seconds) })
        try await withTemporaryStore(dependencies: dependencies) { store in
            let lsn = try await store.localWrite("notes", [.upsert(row("a"))])
            #expect(lsn == 1)
            let stamp = try store.allRecords().first?.timestamp.timeIntervalSince1970
            let expected: Double = seconds.isNaN ? 0 : seconds > 0 ? Double(Int64.max) / 1_000_000 : Double(Int64.min) / 1_000_000
            #expect(stamp == expected)
        }
    }
}

extension NumberLimitTests {
    @Test("a map size or reader table out of range is invalidConfiguration, and no directory is created", arguments: [(0, 126), (-1, 126), (1 << 24, 0), (1 << 24, -5), (1 << 24, 100_001)])
    func configurationOutOfRange(mapSize: Int, maxReaders: Int) async throws {
        try await withTemporaryDirectory { directory in
            var configuration = Configuration.test()
            configuration.mapSize = mapSize
            configuration.maxReaders = maxReaders
            let error = #expect(throws: StoreError.self) {
                try Store(directory: directory, configuration: configuration, dependencies: .test())
            }
            #expect(error?.code == .invalidConfiguration)
            #expect(!FileManager.default.fileExists(atPath: directory.path))
        }
    }
}
