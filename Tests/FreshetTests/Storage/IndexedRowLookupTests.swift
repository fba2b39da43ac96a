import Foundation
import Testing
@testable import Freshet
import FreshetLMDB

/// `FoldTables.withIndexedValue` is the upsert's read: a row ID's position in `rowIndex`, then
/// the row at that position in `rows`. `MemoryTables` answers it from a link it keeps from
/// each index entry to its row entry (one hash lookup where LMDB searches two B-trees), so it
/// must give exactly what an LMDB transaction gives however the tables changed since the link
/// was made: rows moved, removed, replaced by a longer value, entries reused, the arena
/// compacted, a change set rolled back.
@Suite("A row found through its index entry")
struct IndexedRowLookupTests {
    /// The position and value `withIndexedValue` lends, as bytes to compare: nil when the ID
    /// is not indexed, else the position's 8 bytes, then 0xFF and the row's value when there is one.
    static func lookup(_ t: borrowing some FoldTables & ~Copyable, _ dbs: StoreDatabases, prefix: [UInt8], id: [UInt8]) throws -> [UInt8]? {
        let key = prefix + id
        return try key.withUnsafeBytes { key in
            try prefix.withUnsafeBytes { prefix in
                try t.withIndexedValue(dbs.rowIndex, key: key, rows: dbs.rows, prefix: prefix) { position, value in
                    withUnsafeBytes(of: position.bigEndian) { Array($0) } + (value.map { [0xFF] + Array($0) } ?? [])
                }
            }
        }
    }

    @Test("4,000 random steps over two collections (row puts of random lengths, moves, removals, index entries of the wrong length, savepoints rolled back): every lookup gives what an LMDB transaction gives")
    func sameAsLMDB() throws {
        try withScratchStore { store in try Self.sameAsLMDB(store) }
    }

    private static func sameAsLMDB(_ store: Store) throws {
        let dbs = store.state.dbs
        let memory = MemoryTables(dbs: dbs)
        var g = DamagedFileTests.SplitMix(state: 77)
        let prefixes = [Keys.collection("a"), Keys.collection("ab")]
        let ids: [[UInt8]] = (0..<40).map { Array("id\($0)".utf8) }
        var lookups = 0
        var found = 0
        var rowsSeen = 0
        try store.env.write { txn in
            memory.begin()
            for step in 0..<4_000 {
                let prefix = prefixes[Int.random(in: 0..<2, using: &g)]
                let id = ids[Int.random(in: 0..<ids.count, using: &g)]
                let position = UInt64.random(in: 0..<30, using: &g)
                let rowKey = Keys.row(prefix, position: position)
                switch Int.random(in: 0..<12, using: &g) {
                case 0..<3:
                    // A row and its index entry (the fold's put).
                    let value = [UInt8](repeating: UInt8(truncatingIfNeeded: step), count: Int.random(in: 0...40, using: &g))
                    let index = prefix + id
                    let p = withUnsafeBytes(of: position.bigEndian) { Array($0) }
                    try txn.put(dbs.rows, key: rowKey, value: value)
                    try txn.put(dbs.rowIndex, key: index, value: p)
                    try memory.put(dbs.rows, key: rowKey, value: value)
                    try memory.put(dbs.rowIndex, key: index, value: p)
                case 3..<5:
                    // Only the row: an index entry elsewhere may now point at a row that changed.
                    let value = [UInt8](repeating: UInt8(truncatingIfNeeded: step &* 7), count: Int.random(in: 0...200, using: &g))
                    try txn.put(dbs.rows, key: rowKey, value: value)
                    try memory.put(dbs.rows, key: rowKey, value: value)
                case 5..<7:
                    #expect(try txn.delete(dbs.rows, key: rowKey) == (try memory.delete(dbs.rows, key: rowKey)), "row delete at step \(step)")
                case 7:
                    #expect(try txn.delete(dbs.rowIndex, key: prefix + id) == (try memory.delete(dbs.rowIndex, key: prefix + id)), "index delete at step \(step)")
                case 8:
                    // An index value that is not a position (a damaged store read back).
                    let bad = [UInt8](repeating: 1, count: Int.random(in: 0...9, using: &g))
                    if bad.count != 8 {
                        try txn.put(dbs.rowIndex, key: prefix + id, value: bad)
                        try memory.put(dbs.rowIndex, key: prefix + id, value: bad)
                    }
                case 9:
                    // A savepoint rolled back in both (LMDB: a nested transaction aborted).
                    let savepoint = memory.savepoint
                    let key = Keys.row(prefix, position: UInt64.random(in: 0..<30, using: &g))
                    struct Abort: Error {}
                    do {
                        try txn.nested { nested in
                            try nested.put(dbs.rows, key: key, value: [9, 9, 9])
                            _ = try nested.delete(dbs.rowIndex, key: prefix + id)
                            throw Abort()
                        }
                    } catch is Abort {}
                    try memory.put(dbs.rows, key: key, value: [9, 9, 9])
                    _ = try memory.delete(dbs.rowIndex, key: prefix + id)
                    memory.rollback(to: savepoint)
                default:
                    break
                }
                for probe in [id, ids[Int.random(in: 0..<ids.count, using: &g)]] {
                    let stored = try Self.lookup(txn, dbs, prefix: prefix, id: probe)
                    #expect(stored == (try Self.lookup(memory, dbs, prefix: prefix, id: probe)), "lookup of \(probe) at step \(step)")
                    lookups += 1
                    if let stored {
                        found += 1
                        if stored.count > 8 { rowsSeen += 1 }
                    }
                }
            }
            memory.commit()
        }
        // The walk covered every case: IDs not indexed, indexed without a row, indexed with one.
        #expect(lookups == 8_000)
        #expect(found > 1_000 && found < lookups)
        #expect(rowsSeen > 500 && rowsSeen < found)
    }

    @Test("the link from an index entry to its row survives the row's value moving and the arena being compacted, and is not followed to another key")
    func linkAfterMovesAndCompaction() throws {
        let memory = try MemoryTablesTests.tables()
        let dbs = memory.dbs
        let prefix = Keys.collection("c")
        let p7 = withUnsafeBytes(of: UInt64(7).bigEndian) { Array($0) }
        try memory.put(dbs.rowIndex, key: prefix + Array("x".utf8), value: p7)
        try memory.put(dbs.rows, key: Keys.row(prefix, position: 7), value: [1, 2, 3])
        #expect(try Self.lookup(memory, dbs, prefix: prefix, id: Array("x".utf8)) == p7 + [0xFF, 1, 2, 3])
        // Longer values move the record; 200 rounds of 100-byte values over 50 other rows
        // make garbage past half of the arena, so it is rewritten (offsets change).
        for round in 0..<200 {
            for other in 0..<50 {
                try memory.put(dbs.rows, key: Keys.row(prefix, position: UInt64(100 + other)), value: [UInt8](repeating: UInt8(round & 0xFF), count: 100 + round % 2))
            }
            try memory.put(dbs.rows, key: Keys.row(prefix, position: 7), value: [UInt8](repeating: UInt8(round & 0xFF), count: 1 + round % 3))
            #expect(try Self.lookup(memory, dbs, prefix: prefix, id: Array("x".utf8)) == p7 + [0xFF] + [UInt8](repeating: UInt8(round & 0xFF), count: 1 + round % 3), "round \(round)")
        }
        // The row removed: its entry number is reused by another key, which the link must not reach.
        #expect(try memory.delete(dbs.rows, key: Keys.row(prefix, position: 7)))
        try memory.put(dbs.rows, key: Keys.row(prefix, position: 8), value: [8])
        #expect(try Self.lookup(memory, dbs, prefix: prefix, id: Array("x".utf8)) == p7)
        // The same key put back (another entry number): found again.
        try memory.put(dbs.rows, key: Keys.row(prefix, position: 7), value: [4])
        #expect(try Self.lookup(memory, dbs, prefix: prefix, id: Array("x".utf8)) == p7 + [0xFF, 4])
        // The index entry now names position 8.
        let p8 = withUnsafeBytes(of: UInt64(8).bigEndian) { Array($0) }
        try memory.put(dbs.rowIndex, key: prefix + Array("x".utf8), value: p8)
        #expect(try Self.lookup(memory, dbs, prefix: prefix, id: Array("x".utf8)) == p8 + [0xFF, 8])
        #expect(try Self.lookup(memory, dbs, prefix: prefix, id: Array("y".utf8)) == nil)
        // The same ID in a collection whose key has this one's as a prefix is another row.
        #expect(try Self.lookup(memory, dbs, prefix: Keys.collection("cc"), id: Array("x".utf8)) == nil)
    }
}
