import Foundation
import Testing
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

    @Test("5,000 random puts, deletes and walks give what an LMDB transaction gives, forwards and backwards from any key")
    func sameAsLMDB() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("freshet-tests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
        defer { store.close() }
        do {
            let dbs = store.state.dbs
            let db = dbs.confirmed
            let memory = MemoryTables(dbs: dbs)
            var g = DamagedFileTests.SplitMix(state: 8)
            try store.env.write { txn in
                for step in 0..<5_000 {
                    let key = Self.key(&g)
                    let value = [UInt8(truncatingIfNeeded: step), UInt8(truncatingIfNeeded: step >> 8)]
                    switch Int.random(in: 0..<10, using: &g) {
                    case 0..<5:
                        try txn.put(db, key: key, value: value)
                        try memory.put(db, key: key, value: value)
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

    /// Empty memory tables addressed by the handles of a throwaway store.
    static func tables() throws -> MemoryTables {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("freshet-tests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
        defer { store.close() }
        return MemoryTables(dbs: store.state.dbs)
    }
}
