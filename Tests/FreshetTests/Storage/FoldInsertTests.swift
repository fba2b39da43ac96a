import Foundation
import Testing
@testable import Freshet
import FreshetLMDB

/// The insert path of the log tools' tables (docs/performance.md, "Issue 8 speed round 9 (fold
/// inserts)"): leaves that hold no keys (a key is read from the arena when two heads tie), puts
/// of lent keys journaled by entry number, and the last position found with a key on the stack.
@Suite("Fold inserts without allocations")
struct FoldInsertTests {
    @Test("set(bytes:hash:) gives a new key's entry number and nil, a replacement the entry's number and the old value; removeEntry removes that entry's key only")
    func entryNumbers() {
        var table = OrderedTable()
        func set(_ key: [UInt8], _ value: [UInt8], hashed: Bool) -> (entry: Int32, old: [UInt8]?) {
            key.withUnsafeBytes { k in
                value.withUnsafeBytes { v in
                    table.set(bytes: k, hash: hashed ? ByteHashIndex.hash(k) : nil, reserving: v.count) { $0.copyMemory(from: v) }
                }
            }
        }
        #expect(set([5], [50], hashed: true) == (0, nil))
        #expect(set([3], [30], hashed: false) == (1, nil))
        #expect(set([5], [51, 52], hashed: true) == (0, [50]))
        #expect(set([4], [40], hashed: true) == (2, nil))
        table.removeEntry(1)
        #expect(table.entries().map { $0.key + [0xFF] + $0.value } == [[4, 0xFF, 40], [5, 0xFF, 51, 52]])
        // The removed entry's number is reused by the next new key.
        #expect(set([9], [90], hashed: true) == (1, nil))
        #expect(table.value([9]) == [90])
        #expect(table.value([3]) == nil)
    }

    /// Keys whose first 16 bytes (the leaves' heads) are all equal, or equal but for the zero
    /// padding of a shorter key: only the keys themselves, read from the arena, order them.
    static func tiedKeys() -> [[UInt8]] {
        let head = [UInt8](repeating: 7, count: 16)
        var keys: [[UInt8]] = [Array(head[..<15]), Array(head[..<15]) + [0], head, head + [0], head + [0, 0], head + [1], head + [0, 1]]
        for i in 0..<600 { keys.append(head + [UInt8(i % 3), UInt8(truncatingIfNeeded: i * 37), UInt8(i & 0xFF)]) }
        return Array(Set(keys))
    }

    @Test("600 keys that tie on their 16-byte heads, inserted in random order, some removed and replaced (the arena compacted): walks forwards and backwards from any key are LMDB's order")
    func tiedHeads() {
        var g = DamagedFileTests.SplitMix(state: 19)
        let keys = Self.tiedKeys().shuffled(using: &g)
        var table = OrderedTable()
        var reference: [[UInt8]: [UInt8]] = [:]
        for key in keys {
            let value = [UInt8](repeating: UInt8(key.count), count: Int.random(in: 1...40, using: &g))
            table.set(key, value)
            reference[key] = value
        }
        for key in keys.prefix(200) { #expect(table.remove(key) == reference.removeValue(forKey: key)) }
        for key in keys.suffix(300) {
            let value = [UInt8](repeating: 1, count: Int.random(in: 1...80, using: &g))
            #expect(table.set(key, value) == reference.updateValue(value, forKey: key))
        }
        let (walked, expected) = MemoryTablesTests.walk(table, reference)
        #expect(walked == expected)
        let sorted = reference.keys.sorted { OrderedTable.compare($0, $1) < 0 }
        for start in keys.prefix(50) {
            var backwards: [[UInt8]] = []
            table.forEach(from: start, reverse: true) { k, _ in
                backwards.append(Array(k))
                return backwards.count < 5
            }
            #expect(backwards == Array(sorted.filter { OrderedTable.compare($0, start) <= 0 }.reversed().prefix(5)), "from \(start)")
        }
        #expect(table.lastKey == sorted.last)
    }

    @Test("puts by table number with lent keys (new, replacing, a removed entry's number reused) are undone exactly by a savepoint and by a rollback")
    func journaledByEntry() throws {
        let memory = try MemoryTablesTests.tables()
        let db = memory.dbs.rows
        let t = memory.tableNumber(db)
        func put(_ key: [UInt8], _ value: [UInt8]) {
            key.withUnsafeBytes { k in value.withUnsafeBytes { memory.put(t, key: k, hash: ByteHashIndex.hash(k), bytes: $0) } }
        }
        func contents() -> [[UInt8]] { memory.entries(db).map { $0.key + [0xFF] + $0.value } }
        put([1], [10])
        put([2], [20])
        memory.begin()
        put([3], [30])
        put([1], [11, 11])
        let savepoint = memory.savepoint
        try memory.delete(db, key: [2])
        put([0], [0]) // takes the number [2]'s entry had
        put([3], [31])
        #expect(contents() == [[0, 0xFF, 0], [1, 0xFF, 11, 11], [3, 0xFF, 31]])
        memory.rollback(to: savepoint)
        #expect(contents() == [[1, 0xFF, 11, 11], [2, 0xFF, 20], [3, 0xFF, 30]])
        memory.rollback()
        #expect(contents() == [[1, 0xFF, 10], [2, 0xFF, 20]])
    }

    @Test("the last position under a prefix: nil for an empty table, an absent collection or a neighbour's keys; else the largest, read from a key on the stack")
    func lastPosition() throws {
        let memory = try MemoryTablesTests.tables()
        let db = memory.dbs.rows
        let t = memory.tableNumber(db)
        let a = Keys.collection("a")
        let b = Keys.collection("b")
        func last(_ prefix: [UInt8]) -> UInt64? { prefix.withUnsafeBytes { memory.lastPosition(t, prefix: $0) } }
        #expect(last(a) == nil)
        for (prefix, position) in [(a, UInt64(0)), (a, 7), (b, 3), (a, 5), (b, 1 << 40)] {
            try memory.put(db, key: Keys.row(prefix, position: position), value: [1])
        }
        #expect(last(a) == 7)
        #expect(last(b) == 1 << 40)
        #expect(last(Keys.collection("ab")) == nil) // the last key before it is a's, not its own
        #expect(last(Keys.collection("c")) == nil)
        try memory.put(db, key: Keys.row(b, position: UInt64.max), value: [2])
        #expect(last(b) == UInt64.max)
        a.withUnsafeBytes { prefix in
            Keys.row(a, position: 0x0102_0304_0506_0708).withUnsafeBytes { #expect(MaterializedState.position(ofRowKey: $0, prefix: prefix) == 0x0102_0304_0506_0708) }
            (a + [1, 2, 3]).withUnsafeBytes { #expect(MaterializedState.position(ofRowKey: $0, prefix: prefix) == nil) }
            Keys.row(b, position: 1).withUnsafeBytes { #expect(MaterializedState.position(ofRowKey: $0, prefix: prefix) == nil) }
        }
    }
}
