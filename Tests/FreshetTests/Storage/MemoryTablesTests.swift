import Foundation
import Testing
import TestSupport
@testable import Freshet
import FreshetLMDB

/// `MemoryTables` (the log tools' fold target) must behave as an LMDB transaction does on the
/// operations `FoldTables` names, since `verify` compares its result with LMDB's byte for byte.
@Suite("Memory tables behave as LMDB")
struct MemoryTablesTests {
    /// Keys of 1–5 bytes over a small alphabet, so prefixes and equal keys are common.
    static func key(_ g: inout DamagedFileTests.SplitMix) -> [UInt8] {
        (0..<Int.random(in: 1...5, using: &g)).map { _ in UInt8.random(in: 0...3, using: &g) * 60 }
    }

    @Test("5,000 random puts (some written in place, some larger than a page), deletes and walks give what an LMDB transaction gives, forwards and backwards from any key")
    func sameAsLMDB() async throws {
        try await offPool {
            try withScratchStore { store in
                let dbs = store.state.dbs
                let db = dbs.confirmed
                let memory = MemoryTables(dbs: dbs)
                var g = DamagedFileTests.SplitMix(state: 8)
                try store.env.write { txn in
                    for step in 0..<5_000 {
                        let key = Self.key(&g)
                        let value = [UInt8(truncatingIfNeeded: step), UInt8(truncatingIfNeeded: step >> 8)]
                        switch Int.random(in: 0..<10, using: &g) {
                        case 0..<4:
                            try txn.put(db, key: key, value: value)
                            try memory.put(db, key: key, value: value)
                        case 4:
                            // Written in place (MDB_RESERVE), sometimes larger than a page (an overflow page).
                            let reserved = value + [UInt8](repeating: UInt8(truncatingIfNeeded: step), count: step % 3 == 0 ? 5_000 : 1)
                            func fill(_ out: UnsafeMutableRawBufferPointer) { reserved.withUnsafeBytes { out.copyMemory(from: $0) } }
                            try txn.put(db, key: key, reserving: reserved.count, fill)
                            try memory.put(db, key: key, reserving: reserved.count, fill)
                        case 5:
                            var lmdbRefused = false
                            var memoryRefused = false
                            do { try txn.put(db, key: key, value: value, noOverwrite: true) } catch { lmdbRefused = (error as? LMDBError)?.code == LMDBError.keyExists.code }
                            do { try memory.put(db, key: key, value: value, noOverwrite: true) } catch { memoryRefused = (error as? LMDBError)?.code == LMDBError.keyExists.code }
                            #expect(lmdbRefused == memoryRefused, "noOverwrite at step \(step)")
                        case 6..<8:
                            #expect(try txn.delete(db, key: key) == (try memory.delete(db, key: key)), "delete at step \(step)")
                        default:
                            let reverse = Bool.random(using: &g)
                            let start: [UInt8]? = Bool.random(using: &g) ? key : nil
                            func walk(_ t: borrowing some FoldTables & ~Copyable) throws -> [[UInt8]] {
                                var seen: [[UInt8]] = []
                                try t.forEach(db, from: start, reverse: reverse) { k, v in
                                    seen.append(Array(k) + [0xFF] + Array(v))
                                    return seen.count < 7
                                }
                                return seen
                            }
                            #expect(try walk(txn) == (try walk(memory)), "walk at step \(step) from \(start.map { "\($0)" } ?? "the end") reverse \(reverse)")
                        }
                        #expect(try txn.get(db, key: key) == (try memory.get(db, key: key)), "get at step \(step)")
                    }
                    var all: [[UInt8]] = []
                    try txn.forEach(db) { k, v in all.append(Array(k) + [0xFF] + Array(v)); return true }
                    #expect(memory.entries(db).map { $0.key + [0xFF] + $0.value } == all)
                    #expect(memory.count(db) == all.count)
                }
            }
        }
    }

    @Test("a rolled-back change set leaves the tables as they were; a savepoint undoes only what came after it")
    func rollback() throws {
        let memory = try MemoryTablesTests.tables()
        let db = memory.dbs.rows
        try memory.put(db, key: [1], value: [1])
        memory.begin()
        try memory.put(db, key: [1], value: [2])
        try memory.put(db, key: [2], value: [2])
        let savepoint = memory.savepoint
        try memory.delete(db, key: [1])
        try memory.put(db, key: [3], value: [3])
        memory.rollback(to: savepoint)
        #expect(memory.entries(db).map { $0.key + $0.value } == [[1, 2], [2, 2]])
        memory.rollback()
        #expect(memory.entries(db).map { $0.key + $0.value } == [[1, 1]])
        #expect { try memory.put(db, key: [0], value: [], append: true) } throws: { ($0 as? LMDBError)?.code == LMDBError.keyExists.code }
    }

    @Test("40,000 distinct keys put, a random half removed and a quarter put again: every lookup and the ordered walk match a sorted reference")
    func manyKeys() async throws {
        await offPool {
            var table = OrderedTable()
            var reference: [[UInt8]: [UInt8]] = [:]
            var g = DamagedFileTests.SplitMix(state: 21)
            // Keys of 1–24 bytes (every tail length of the 8-byte hash loop), many sharing prefixes.
            let keys: [[UInt8]] = (0..<40_000).map { i in
                let prefix: [UInt8] = [UInt8(i % 7), UInt8(i % 5)]
                return prefix + (0..<Int.random(in: 0...22, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) } + [UInt8(i & 0xFF), UInt8(i >> 8)]
            }
            for (i, key) in keys.enumerated() where reference[key] == nil {
                let value = [UInt8(i & 0xFF)]
                #expect(table.set(key, value) == nil)
                reference[key] = value
            }
            for key in keys.shuffled(using: &g).prefix(20_000) {
                #expect(table.remove(key) == reference.removeValue(forKey: key))
            }
            for key in keys.shuffled(using: &g).prefix(10_000) {
                let value: [UInt8] = [0xAB, UInt8(key.count)]
                #expect(table.set(key, value) == reference.updateValue(value, forKey: key))
            }
            for key in keys {
                #expect(table.value(key) == reference[key])
            }
            #expect(table.count == reference.count)
            let (walked, expected) = Self.walk(table, reference)
            #expect(walked == expected)
            #expect(table.lastKey == reference.keys.sorted { $0.lexicographicallyPrecedes($1) }.last)
        }
    }

    @Test("the hash index finds every entry when all hashes collide or wrap around the slot array, after removals in any order")
    func collidingHashes() {
        var g = DamagedFileTests.SplitMix(state: 5)
        // Three hashes only; the slot array starts at 16 slots, so a hash whose home is 15
        // wraps, and one whose home is 14 runs into it (the home is the hash's upper 24 bits).
        // The payloads stand for entries.
        let hashes: [UInt64] = [15 << 40, 14 << 40, 0xFFFF_FF00_0000_0000]
        var index = ByteHashIndex()
        var present: [Int32: UInt64] = [:]
        var removed: [Int32] = []
        for entry in Int32(0)..<300 {
            let hash = hashes[Int(entry) % hashes.count]
            index.insert(UInt64(entry), hash: hash)
            present[entry] = hash
        }
        for entry in present.keys.sorted().shuffled(using: &g).prefix(200) {
            index.remove(UInt64(entry), hash: present[entry]!)
            present[entry] = nil
            removed.append(entry)
            if entry % 3 == 0 {
                let again = entry + 1_000
                index.insert(UInt64(again), hash: hashes[1])
                present[again] = hashes[1]
            }
        }
        #expect(index.count == present.count)
        for (entry, hash) in present {
            #expect(index.find(hash: hash) { $0 == UInt64(entry) }?.payload == UInt64(entry), "entry \(entry)")
        }
        for entry in removed {
            #expect(index.find(hash: hashes[Int(entry) % hashes.count]) { $0 == UInt64(entry) } == nil, "removed entry \(entry)")
        }
    }

    @Test("the key hash reads the last bytes of a key as the byte-at-a-time reading does, for keys of 0 to 40 bytes at any offset")
    func hashTail() {
        // The hash as it was before round 8 (reading side): words and tail gathered a byte at a
        // time (the finalizer is the same).
        func reference(_ bytes: [UInt8], seed: UInt64) -> UInt64 {
            let n = bytes.count
            var h = seed ^ (UInt64(n) &* 0x9E37_79B9_7F4A_7C15)
            var i = 0
            while i + 8 <= n {
                var w: UInt64 = 0
                for k in 0..<8 { w |= UInt64(bytes[i + k]) << (8 * UInt64(k)) }
                h = (h ^ w) &* 0x9E37_79B9_7F4A_7C15
                h ^= h >> 32
                i += 8
            }
            if i < n {
                var w: UInt64 = 0
                for k in i..<n { w |= UInt64(bytes[k]) << (8 * UInt64(k - i)) }
                h = (h ^ w) &* 0x9E37_79B9_7F4A_7C15
            }
            return ByteHashIndex.finish(h)
        }
        var g = DamagedFileTests.SplitMix(state: 12)
        let buffer = (0..<64).map { _ in UInt8.random(in: 0...255, using: &g) }
        for seed: UInt64 in [0, 0x0123_4567_89AB_CDEF, .max] {
            for count in 0...40 {
                for offset in [0, 1, 7, 64 - count] {
                    let key = Array(buffer[offset..<(offset + count)])
                    let got = buffer.withUnsafeBytes { ByteHashIndex.hash(UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + count)]), seed: seed) }
                    #expect(got == reference(key, seed: seed), "\(count) bytes at \(offset), seed \(seed)")
                }
            }
        }
    }

    @Test("a value replaced by one of the same length is overwritten in place; one of another length moves to a new record of the arena")
    func arenaReplacement() {
        var table = OrderedTable()
        #expect(table.set([1, 2, 3], Array(repeating: 9, count: 10)) == nil)
        // A record: entry number, key length, value length (4 bytes each), key, value.
        #expect(table.arenaBytes == 12 + 3 + 10)
        #expect(table.set([1, 2, 3], Array(0..<10)) == Array(repeating: 9, count: 10))
        #expect(table.arenaBytes == 25)
        #expect(table.value([1, 2, 3]) == Array(0..<10))
        #expect(table.set([1, 2, 3], [7]) == Array(0..<10))
        #expect(table.arenaBytes == 25 + 12 + 3 + 1)
        #expect(table.set([1, 2], []) == nil)
        #expect(table.value([1, 2]) == [])
        #expect(table.value([1, 2, 3]) == [7])
        #expect(table.value([1]) == nil)
        #expect(table.count == 2)
    }

    @Test("40 rounds of puts of random lengths and removals over 500 keys: every value exact, the arena compacted and never more than twice the live bytes")
    func arenaCompaction() async {
        await offPool {
            var table = OrderedTable()
            var reference: [[UInt8]: [UInt8]] = [:]
            var g = DamagedFileTests.SplitMix(state: 34)
            let keys: [[UInt8]] = (0..<500).map { i in [UInt8(i >> 8), UInt8(i & 0xFF), 7] }
            var shrank = 0
            for round in 0..<40 {
                for key in keys {
                    let before = table.arenaBytes
                    if Int.random(in: 0..<4, using: &g) == 0 {
                        #expect(table.remove(key) == reference.removeValue(forKey: key), "remove in round \(round)")
                    } else {
                        let value = (0..<Int.random(in: 0...64, using: &g)).map { UInt8(truncatingIfNeeded: $0 &+ round) }
                        // Read first, as the fold does before it replaces a row.
                        #expect(table.value(key) == reference[key])
                        #expect(table.set(key, value) == reference.updateValue(value, forKey: key), "set in round \(round)")
                    }
                    if table.arenaBytes < before { shrank += 1 }
                    let live = reference.reduce(0) { $0 + 12 + $1.key.count + $1.value.count }
                    #expect(table.arenaBytes <= max(2 * live, live + 4096), "arena \(table.arenaBytes) bytes for \(live) live in round \(round)")
                }
                for key in keys { #expect(table.value(key) == reference[key], "round \(round)") }
                #expect(table.count == reference.count)
            }
            #expect(shrank > 0, "the arena was never compacted")
            let (walked, expected) = Self.walk(table, reference)
            #expect(walked == expected)
        }
    }

    /// The table's entries walked in key order, and the reference's sorted as LMDB sorts
    /// them, each as key + 0xFF + value.
    static func walk(_ table: OrderedTable, _ reference: [[UInt8]: [UInt8]]) -> (walked: [[UInt8]], expected: [[UInt8]]) {
        var walked: [[UInt8]] = []
        table.forEach(from: nil, reverse: false) { k, v in
            walked.append(Array(k) + [0xFF] + Array(v))
            return true
        }
        let sorted = reference.keys.sorted { $0.lexicographicallyPrecedes($1) }
        return (walked, sorted.map { $0 + [0xFF] + reference[$0]! })
    }

    /// Empty memory tables addressed by the handles of a throwaway store.
    static func tables() throws -> MemoryTables {
        try withScratchStore { MemoryTables(dbs: $0.state.dbs) }
    }
}

extension MemoryTablesTests {
    @Test("a value reserved and filled in place: a new key, the same length again (overwritten in place), another length (a new record); the journal undoes all three")
    func reservedInPlace() throws {
        let memory = try MemoryTablesTests.tables()
        let db = memory.dbs.rows
        memory.begin()
        try memory.put(db, key: [7, 1], reserving: 3) { out in for i in 0..<3 { out[i] = UInt8(i + 1) } }
        #expect(try memory.get(db, key: [7, 1]) == [1, 2, 3])
        memory.commit()
        memory.begin()
        try memory.put(db, key: [7, 1], reserving: 3) { out in for i in 0..<3 { out[i] = UInt8(9 - i) } }
        #expect(try memory.get(db, key: [7, 1]) == [9, 8, 7])
        try memory.put(db, key: [7, 1], reserving: 5) { out in for i in 0..<5 { out[i] = UInt8(20 + i) } }
        #expect(try memory.get(db, key: [7, 1]) == [20, 21, 22, 23, 24])
        try memory.put(db, key: [7, 2], reserving: 0) { _ in }
        #expect(memory.entries(db).map { $0.key + [0xFF] + $0.value } == [[7, 1, 0xFF, 20, 21, 22, 23, 24], [7, 2, 0xFF]])
        memory.rollback()
        #expect(memory.entries(db).map { $0.key + [0xFF] + $0.value } == [[7, 1, 0xFF, 1, 2, 3]])
    }
}
