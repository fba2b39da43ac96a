import Foundation
import Testing
@testable import Freshet
import FreshetLMDB
import FreshetTesting

/// A local write sets its collection's `lastLSN` (and `rowsLSN` when a row changed) in place in
/// the commit's `SyncMarkCache` (`stamp`), or reads and puts the mark when there is no cache: both
/// must give the mark the general fold path gave — every other field kept.
@Suite("A local write's SyncMark, stamped in place")
struct SyncMarkStampTests {
    static func write(_ lsn: LSN, _ collection: String, _ ops: [Event.RowChanges.Op]) -> LogRecord {
        LogRecord(lsn: lsn, timestamp: TestClock.now, collection: collection, event: .localWrite(Event.RowChanges(ops)))
    }

    static func row(_ id: String, _ json: String) -> Event.RowChanges.Op { .upsert(Row(id: id, json: Data(json.utf8))) }

    @Test("the cache: an unknown collection is not stamped; one known to have no mark gets a new one; a stamp without a row change keeps rowsLSN; a restored checkpoint undoes it; the flush writes the mark")
    func cache() throws {
        let memory = try MemoryTablesTests.tables()
        let cache = SyncMarkCache()
        #expect(!cache.stamp("a", lsn: 3, rowsChanged: true))
        #expect(cache.cached("a") == nil)
        cache.remember(nil, for: "a")
        #expect(cache.stamp("a", lsn: 3, rowsChanged: true))
        var expected = SyncMark()
        expected.lastLSN = 3
        expected.rowsLSN = 3
        #expect(cache.cached("a") == .some(expected))
        let saved = cache.checkpoint()
        #expect(cache.stamp("a", lsn: 9, rowsChanged: false))
        expected.lastLSN = 9
        #expect(cache.cached("a") == .some(expected))
        cache.restore(saved)
        expected.lastLSN = 3
        #expect(cache.cached("a") == .some(expected))
        try cache.flush(into: memory, marks: memory.dbs.marks, meta: memory.dbs.meta)
        #expect(try memory.get(memory.dbs.marks, key: Array("a".utf8)) == expected.encoded())
    }

    @Test("local writes folded with a cache and without one leave the same marks, with every field of a fetched mark kept")
    func sameMarkEitherWay() throws {
        func fold(cached: Bool) throws -> [(key: [UInt8], value: [UInt8])] {
            let memory = try MemoryTablesTests.tables()
            let dbs = memory.dbs
            var fetched = SyncMark()
            fetched.etag = "\"v1\""
            fetched.fetchedLSN = 1
            fetched.lastLSN = 1
            fetched.rowsLSN = 1
            fetched.pageCount = 2
            fetched.pages = [SyncMark.PageMark(url: "https://x.invalid/p0", etag: "e0"), SyncMark.PageMark(url: "https://x.invalid/p1")]
            try memory.put(dbs.marks, key: Array("b".utf8), value: fetched.encoded())
            let marks = cached ? SyncMarkCache() : nil
            let state = MaterializedState(dbs: dbs, marks: marks)
            let records = [
                Self.write(2, "a", [Self.row("1", "{}")]),
                Self.write(3, "b", [Self.row("1", "{}")]),
                Self.write(4, "a", [Self.row("1", "{}")]),           // unchanged: rowsLSN stays 2
                Self.write(5, "b", [.delete(id: "none")]),           // nothing removed: rowsLSN stays 3
                Self.write(6, "a", [Self.row("1", "[]"), Self.row("2", "{}")]),
            ]
            for record in records { try Fold.apply(record, to: state, in: memory) }
            if let marks { try marks.flush(into: memory, marks: dbs.marks, meta: dbs.meta) }
            return memory.entries(dbs.marks)
        }
        let withCache = try fold(cached: true)
        #expect(withCache.map(\.key) == [Array("a".utf8), Array("b".utf8)])
        #expect(try fold(cached: false).map { $0.key + [0xFF] + $0.value } == withCache.map { $0.key + [0xFF] + $0.value })
        let a = try SyncMark.decode(withCache[0].value)
        var expectedA = SyncMark()
        expectedA.lastLSN = 6
        expectedA.rowsLSN = 6
        #expect(a == expectedA)
        let b = try SyncMark.decode(withCache[1].value)
        #expect(b.lastLSN == 5)
        #expect(b.rowsLSN == 3)
        #expect(b.etag == "\"v1\"" && b.fetchedLSN == 1 && b.pageCount == 2 && b.pages.map(\.url) == ["https://x.invalid/p0", "https://x.invalid/p1"])
    }
}
