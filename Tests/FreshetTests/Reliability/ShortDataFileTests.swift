import Foundation
import Testing
@testable import Freshet
@testable import FreshetLMDB

/// A healthy `data.mdb` may end before its meta page's last page: LMDB 0.9 (non-`WRITEMAP`)
/// counts a page in `mm_last_pg` when a transaction allocates it, and a page allocated and
/// freed in the same transaction is never written. Such a file must open; a file that lacks a
/// page LMDB reads is still refused as cut short (docs/reliability.md, "Damaged files").
@Suite("Short data files")
struct ShortDataFileTests {
    /// The file's size and the bytes its current meta page's `lastPage` covers.
    static func sizes(_ directory: URL) throws -> (size: Int, covered: Int, summary: DataFile.Summary) {
        let file = try DataFile(path: directory.appendingPathComponent("data.mdb").path)
        let summary = try file.check()
        return (file.size, (summary.lastPage + 1) * summary.pageSize, summary)
    }

    /// The fields of the meta page LMDB uses (the larger transaction ID, page 0 on a tie),
    /// read from the file's bytes: its byte offset, the page size, the last page in use and
    /// the main tree's root page.
    static func currentMeta(_ bytes: [UInt8]) -> (offset: Int, pageSize: Int, lastPage: Int, mainRoot: Int) {
        let pageSize = readU64(bytes, 40) & 0xFFFF_FFFF
        let offset = readU64(bytes, pageSize + 144) > readU64(bytes, 144) ? pageSize : 0
        return (offset, pageSize, readU64(bytes, offset + 136), readU64(bytes, offset + 128))
    }

    /// Builds the damaged-file fixture store in `directory` and returns its `data.mdb` and bytes.
    static func fixture(in directory: URL) async throws -> (data: URL, bytes: [UInt8]) {
        try await DamagedStoreFixture.build(in: directory)
        let data = directory.appendingPathComponent("data.mdb")
        return (data, Array(try Data(contentsOf: data)))
    }

    /// Opens the fixture store in `directory`, reads its rows and pending mutations, writes a
    /// row, reopens it and reads that row back, and runs `freshet verify` on it.
    static func expectOpensReadsAndWrites(_ directory: URL) async throws {
        var configuration = Configuration.test()
        configuration.sendsMutations = false
        let store = try Store(directory: directory, configuration: configuration, dependencies: .test())
        #expect(try store.snapshot("pokemon").rows.count == 240)
        #expect(try store.pendingMutations().map(\.id) == DamagedStoreFixture.pendingIDs)
        try await store.localWrite("favourites", [.upsert(row("1", "bulbasaur"))])
        store.close()
        let reopened = try Store(directory: directory, configuration: configuration, dependencies: .test())
        #expect(try reopened.snapshot("favourites").rows.map(\.id) == ["25", "133", "1"])
        reopened.close()
        let verify = runTool(["verify", directory.path])
        #expect(verify.status == 0)
        #expect(verify.stderr == [])
    }

    static func readU64(_ bytes: [UInt8], _ at: Int) -> Int {
        Int((0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) })
    }

    static func writeU64(_ bytes: inout [UInt8], _ at: Int, _ value: Int) {
        for i in 0..<8 { bytes[at + i] = UInt8(truncatingIfNeeded: UInt64(value) >> (8 * UInt64(i))) }
    }

    @Test("overflow values put and deleted in one transaction leave the file short of its last page; the store opens, verifies, states its numbers and writes")
    func freedInSameTransaction() async throws {
        try await withTemporaryDirectory { directory in
            try await DamagedStoreFixture.build(in: directory)
            try withRawEnvironment(directory) { env, dbs in
                let meta = try #require(dbs["meta"])
                // A few commits first, so the free list has pages to hand out.
                for round in 0..<3 {
                    try env.write { txn in try txn.put(meta, key: Array("scratch-\(round)".utf8), value: [UInt8](repeating: 1, count: 100)) }
                    _ = try env.write { txn in try txn.delete(meta, key: Array("scratch-\(round)".utf8)) }
                }
                // Ten overflow runs allocated past the file's end and freed in the same
                // transaction: counted in the last page, never written.
                try env.write { txn in
                    for i in 0..<10 { try txn.put(meta, key: Array("big-\(i)".utf8), value: [UInt8](repeating: 2, count: 10_000)) }
                    for i in 0..<10 { _ = try txn.delete(meta, key: Array("big-\(i)".utf8)) }
                }
            }
            let (size, covered, summary) = try Self.sizes(directory)
            #expect(size == 188_416)
            #expect(covered == 299_008)
            #expect(summary.databases == StoreDatabases.names.sorted())

            let stats = runTool(["stats", directory.path])
            #expect(stats.status == 0)
            #expect(stats.stdout.contains { $0.hasPrefix("file         data.mdb \(size) bytes, ") })
            #expect(stats.stdout.contains { $0.hasPrefix("pages        \(summary.lastPage + 1) used, ") })
            try await Self.expectOpensReadsAndWrites(directory)
            #expect(try Self.sizes(directory).summary.databases == StoreDatabases.names.sorted())
        }
    }

    @Test("a meta page whose last page is raised by three past the file's end passes the check; the store opens, reads and writes")
    func lastPageRaisedByHand() async throws {
        try await withTemporaryDirectory { directory in
            let (data, original) = try await Self.fixture(in: directory)
            var bytes = original
            let (meta, pageSize, lastPage, _) = Self.currentMeta(bytes)
            #expect(bytes.count == (lastPage + 1) * pageSize)
            Self.writeU64(&bytes, meta + 136, lastPage + 3)
            try Data(bytes).write(to: data)

            let file = try DataFile(path: data.path)
            let summary = try file.check()
            #expect(summary.lastPage == lastPage + 3)
            #expect(file.size == (lastPage + 1) * pageSize)
            #expect(summary.databases == StoreDatabases.names.sorted())
            try await Self.expectOpensReadsAndWrites(directory)
        }
    }

    @Test("a file cut before a page the main tree reaches is refused with the cut-short message, in one go, mapped and page by page, and left as it was")
    func reachablePageCutAway() async throws {
        try await withTemporaryDirectory { directory in
            let (data, bytes) = try await Self.fixture(in: directory)
            let (meta, pageSize, lastPage, mainRoot) = Self.currentMeta(bytes)
            let cut = Array(bytes.prefix(mainRoot * pageSize))
            try Data(cut).write(to: data)
            let reason = "the file is \(cut.count) bytes but its meta page uses pages 0 ... \(lastPage) of \(pageSize) bytes (\(bytes.count) bytes): it was cut short"
            for (inOneGo, limit) in [(true, DataFile.windowLimit), (false, DataFile.windowLimit), (true, 0)] {
                #expect(throws: DataFileDamage(page: meta / pageSize, reason)) {
                    try DataFile(path: data.path).check(readingPagesInOneGo: inOneGo, windowLimit: limit)
                }
            }
            #expect {
                _ = try Store(directory: directory, configuration: .test(), dependencies: .test())
            } throws: { error in
                (error as? StoreError)?.code == .corrupted
                    && (error as? StoreError)?.message == "\(data.path) is damaged (page \(meta / pageSize): \(reason)); nothing was opened. Store.recoverDamaged(directory:) moves it aside and starts an empty store"
            }
            #expect(Array(try Data(contentsOf: data)) == cut)
        }
    }

    @Test("a last page of 2^40, past the meta page's map size, is cut short without a walk; recovery's tolerant reader still reads every log record")
    func lastPagePastTheMap() async throws {
        try await withTemporaryDirectory { directory in
            let (data, original) = try await Self.fixture(in: directory)
            var bytes = original
            let intact = try DataFile(path: data.path).records(inDatabase: "log")
            let (meta, pageSize, _, _) = Self.currentMeta(bytes)
            Self.writeU64(&bytes, meta + 136, 1 << 40)
            try Data(bytes).write(to: data)
            let reason = "the file is \(bytes.count) bytes but its meta page uses pages 0 ... 1099511627776 of \(pageSize) bytes (\(((1 << 40) + 1) * pageSize) bytes): it was cut short"
            #expect(throws: DataFileDamage(page: meta / pageSize, reason)) { try DataFile(path: data.path).check() }
            let records = try DataFile(path: data.path).records(inDatabase: "log")
            #expect(intact.entries.count == 11)
            #expect(records.entries.map(\.key) == intact.entries.map(\.key))
            #expect(records.damagedPages == [])
            #expect(records.skippedEntries == 0)
        }
    }
}
