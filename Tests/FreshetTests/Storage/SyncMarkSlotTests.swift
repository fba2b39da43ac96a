import Foundation
import Testing
@testable import Freshet
import FreshetLMDB

/// `SyncMarkCache` finds a collection by its name's UTF-8 bytes (a `ByteHashIndex` over them),
/// hands out the collection's key prefix and stamps through the slot (issue 8 speed round 5).
@Suite("A mark cache's slots")
struct SyncMarkSlotTests {
    @Test("300 collections (the hash index grows past its first 16 slots): each name finds its own slot, prefix and mark; an unknown name finds none")
    func manyCollections() throws {
        let cache = SyncMarkCache()
        let names = (0..<300).map { "c\($0)" } + ["pokemon/list?offset=20&limit=20", String(repeating: "x", count: 200)]
        for (i, name) in names.enumerated() {
            var mark = SyncMark()
            mark.lastLSN = LSN(UInt64(i + 1))
            cache.remember(mark, for: name)
        }
        for (i, name) in names.enumerated() {
            let slot = try #require(cache.slot(for: name), "\(name)")
            #expect(cache.prefix(at: slot) == Keys.collection(name))
            #expect(cache.cached(name)??.lastLSN == LSN(UInt64(i + 1)))
        }
        #expect(cache.slot(for: "c300") == nil)
        #expect(cache.slot(for: "c") == nil)
        #expect(cache.slot(for: "") == nil)
    }

    @Test("names that are the same text in two Unicode forms (é precomposed and decomposed) are two collections, as they are two keys of the marks database")
    func namesByBytes() throws {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed) // equal as Swift strings
        let memory = try MemoryTablesTests.tables()
        let cache = SyncMarkCache()
        cache.remember(nil, for: composed)
        cache.remember(nil, for: decomposed)
        let a = try #require(cache.slot(for: composed))
        let b = try #require(cache.slot(for: decomposed))
        #expect(cache.prefix(at: a) == [0, 5] + Array(composed.utf8))
        #expect(cache.prefix(at: b) == [0, 6] + Array(decomposed.utf8))
        cache.stamp(at: a, lsn: 7, rowsChanged: true)
        cache.stamp(at: b, lsn: 8, rowsChanged: false)
        try cache.flush(into: memory, marks: memory.dbs.marks, meta: memory.dbs.meta)
        var first = SyncMark()
        first.lastLSN = 7
        first.rowsLSN = 7
        var second = SyncMark()
        second.lastLSN = 8
        let stored = memory.entries(memory.dbs.marks)
        // In the bytes' order: "cafe\u{301}" (…65 CC 81) before "caf\u{E9}" (…C3 A9).
        #expect(stored.map(\.key) == [Array(decomposed.utf8), Array(composed.utf8)])
        #expect(stored.map(\.value) == [second.encoded(), first.encoded()])
    }

    @Test("a checkpoint restored forgets the collections added after it; the ones before keep their slots")
    func restoreForgetsLaterNames() throws {
        let cache = SyncMarkCache()
        cache.remember(nil, for: "a")
        let saved = cache.checkpoint()
        cache.remember(nil, for: "b")
        let b = try #require(cache.slot(for: "b"))
        #expect(cache.prefix(at: b) == [0, 1, UInt8(ascii: "b")])
        cache.restore(saved)
        #expect(cache.slot(for: "b") == nil)
        let a = try #require(cache.slot(for: "a"))
        cache.stamp(at: a, lsn: 4, rowsChanged: false)
        var expected = SyncMark()
        expected.lastLSN = 4
        #expect(cache.cached("a") == .some(expected))
        // Added again after the restore, "b" is a collection with no mark.
        cache.remember(nil, for: "b")
        #expect(cache.cached("b") == .some(nil))
    }
}
