import Foundation
import Testing
@testable import Freshet

/// Issue 12: what ``Store/recoverDamaged(directory:configuration:dependencies:)`` carries over
/// — local-only rows, LSNs that continue — and the exact counts it reports for damage to
/// chosen pages and records of the log.
@Suite("Damaged store recovery")
struct DamagedRecoveryTests {
    /// A log leaf page of a store file and the records on it, found by walking the log's
    /// B-tree from the current meta page (LMDB 0.9 layout: docs/reliability.md, "Damaged files").
    struct LogLeaf {
        var page: Int
        /// Each node: the record's LSN, the node's offset in the page, and the first overflow
        /// page when the record lives on overflow pages.
        var nodes: [(lsn: UInt64, offset: Int, overflow: Int?)]
    }

    static func u16(_ b: [UInt8], _ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 }
    static func u64(_ b: [UInt8], _ at: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 | UInt64(b[at + $1]) << (8 * UInt64($1)) } }

    /// The leaf pages of the `log` database, in key order.
    static func logLeaves(_ bytes: [UInt8]) throws -> (pageSize: Int, leaves: [LogLeaf]) {
        let pageSize = u16(bytes, 40) | u16(bytes, 42) << 16
        let meta = u64(bytes, 144) >= u64(bytes, pageSize + 144) ? 0 : pageSize
        func nodes(_ page: Int) -> [(key: [UInt8], offset: Int, flags: Int, lo: Int, hi: Int)] {
            let base = page * pageSize
            let lower = u16(bytes, base + 12)
            return (0..<(lower - 16) / 2).map { i in
                let offset = u16(bytes, base + 16 + 2 * i)
                let at = base + offset
                let keySize = u16(bytes, at + 6)
                return (Array(bytes[at + 8 ..< at + 8 + keySize]), offset, u16(bytes, at + 4), u16(bytes, at), u16(bytes, at + 2))
            }
        }
        // The main tree is one leaf page; its `log` node holds the log's MDB_db (root at +40).
        let mainRoot = Int(u64(bytes, meta + 128))
        guard let log = nodes(mainRoot).first(where: { $0.key == Array("log".utf8) }) else { throw StoreError(.corrupted, "no log database") }
        var leaves: [LogLeaf] = []
        func walk(_ page: Int) {
            let base = page * pageSize
            let flags = u16(bytes, base + 10)
            for node in nodes(page) {
                if flags & 0x01 != 0 {
                    walk(node.lo | node.hi << 16 | node.flags << 32)
                    continue
                }
            }
            guard flags & 0x02 != 0 else { return }
            leaves.append(LogLeaf(page: page, nodes: nodes(page).map { node in
                let lsn = node.key.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                let overflow = node.flags & 0x01 != 0 ? Int(u64(bytes, base + node.offset + 8 + node.key.count)) : nil
                return (lsn, node.offset, overflow)
            }))
        }
        walk(Int(u64(bytes, valueOffset(log, in: mainRoot, pageSize: pageSize) + 40)))
        return (pageSize, leaves)
    }

    /// Where a main-tree node's value (an MDB_db) starts in the file.
    static func valueOffset(_ node: (key: [UInt8], offset: Int, flags: Int, lo: Int, hi: Int), in page: Int, pageSize: Int) -> Int {
        page * pageSize + node.offset + 8 + node.key.count
    }

    static func note(_ id: String, _ text: String = "a note") -> Row {
        Row(id: id, json: Data("{\"id\":\"\(id)\",\"text\":\"\(text)\"}".utf8))
    }

    /// 240 local writes to `notes` (one new row each), a 12 kB row among them at step 100
    /// (on overflow pages), a fetched collection, and one pending mutation at the end.
    /// Returns the last LSN. Closes the store.
    static func buildLongLog(in directory: URL) async throws -> LSN {
        var configuration = Configuration.test()
        configuration.sendsMutations = false
        let store = try Store(directory: directory, configuration: configuration, dependencies: .test())
        defer { store.close() }
        try await store.append(replace(rows("1", "2")), to: "todos")
        for n in 0..<240 {
            let row = n == 100 ? note("n\(n)", String(repeating: "y", count: 12_000)) : note("n\(n)")
            try await store.localWrite("notes", [.upsert(row)])
        }
        let mutation = Mutation(name: "editTodo", ops: [.upsert(row("1", "edit"), in: "todos")], request: .init(method: .put, path: "/todos/1"))
        try await store.append(.mutationProposed(Event.MutationProposed(id: DamagedStoreFixture.pendingIDs[0], mutation: mutation)), to: "todos")
        return store.lastLSN
    }

    /// Builds the long log, lets `damage` edit a copy of its file, recovers it, and returns the
    /// report, the recovered store (open) and what the log looked like.
    static func recover(damage: (inout [UInt8], Int, [LogLeaf]) throws -> Void,
                        _ check: (DamagedStoreRecovery, Store, LSN) async throws -> Void) async throws {
        try await withTemporaryDirectory { parent in
            let directory = parent.appendingPathComponent("store")
            let last = try await buildLongLog(in: directory)
            let data = directory.appendingPathComponent("data.mdb")
            var bytes = Array(try Data(contentsOf: data))
            let (pageSize, leaves) = try logLeaves(bytes)
            #expect(leaves.count >= 5)
            #expect(leaves.flatMap(\.nodes).count == Int(last.rawValue))
            try damage(&bytes, pageSize, leaves)
            try Data(bytes).write(to: data)
            var configuration = Configuration.test()
            configuration.sendsMutations = false
            let (store, recovery) = try await Store.recoverDamaged(directory: directory, configuration: configuration, dependencies: .test())
            defer { store.close() }
            try await check(recovery, store, last)
        }
    }

    @Test("local-only rows come back per collection, fetched rows do not, and the report counts them")
    func localRowsKept() async throws {
        try await Self.recover(damage: { _, _, _ in }) { recovery, store, last in
            #expect(recovery.recoveredLocalRows == ["notes": 240])
            let notes = try store.snapshot("notes").rows
            #expect(notes.map(\.id) == (0..<240).map { "n\($0)" })
            #expect(notes[7].json == Self.note("n7").json)
            #expect(try store.snapshot("todos").rows.map(\.id) == ["1"])  // the pending edit's overlay only
            #expect(recovery.readableRecords == Int(last.rawValue))
            #expect(recovery.unreadableRecords == 0)
            #expect(recovery.damagedPages == 0)
        }
    }

    @Test("LSNs continue after the last one the damaged store assigned: a checkpoint through it, then the carried-over events; verify passes")
    func lsnsContinue() async throws {
        try await Self.recover(damage: { _, _, _ in }) { recovery, store, last in
            #expect(recovery.continuedAfter == last)
            // checkpoint at last + 1, the notes' localWrite at last + 2, the proposal at last + 3
            #expect(store.lastLSN == LSN(last.rawValue + 3))
            let checkpoint = try store.latestCheckpoint()
            #expect(checkpoint?.throughLSN == last)
            #expect(checkpoint?.lsn == last.next)
            let pending = try store.pendingMutations()
            #expect(pending.map(\.id) == [DamagedStoreFixture.pendingIDs[0]])
            #expect(pending.first?.lsn == LSN(last.rawValue + 3))
            let verified = try store.verify()
            #expect(verified.problems == [])
            let next = try await store.localWrite("notes", [.upsert(Self.note("after"))])
            #expect(next == LSN(last.rawValue + 4))
        }
    }

    @Test("a zeroed log leaf page: every record on it is unreadable, one damaged page, the others read")
    func zeroedLeaf() async throws {
        var lost = 0
        try await Self.recover(damage: { bytes, pageSize, leaves in
            let leaf = leaves[2]
            lost = leaf.nodes.count
            for i in 0..<pageSize { bytes[leaf.page * pageSize + i] = 0 }
        }) { recovery, store, last in
            #expect(lost > 5)
            #expect(recovery.unreadableRecords == lost)
            #expect(recovery.readableRecords == Int(last.rawValue) - lost)
            #expect(recovery.damagedPages == 1)
            #expect(recovery.recoveredLocalRows == ["notes": 240 - lost])
            #expect(recovery.continuedAfter == last)
        }
    }

    @Test("one record's bytes flipped: that record is unreadable (CRC-32C), no page is damaged")
    func flippedRecord() async throws {
        try await Self.recover(damage: { bytes, pageSize, leaves in
            let leaf = leaves[3]
            let node = leaf.nodes[4]
            let at = leaf.page * pageSize + node.offset
            let size = Self.u16(bytes, at)
            bytes[at + 16 + size / 2] ^= 0xFF
        }) { recovery, _, last in
            #expect(recovery.unreadableRecords == 1)
            #expect(recovery.readableRecords == Int(last.rawValue) - 1)
            #expect(recovery.damagedPages == 0)
            #expect(recovery.recoveredLocalRows == ["notes": 239])
        }
    }

    @Test("one node's offset damaged: only that record is lost, the leaf's other records are read, one damaged page")
    func damagedNode() async throws {
        try await Self.recover(damage: { bytes, pageSize, leaves in
            let leaf = leaves[3]
            #expect(leaf.nodes.count > 6)
            let at = leaf.page * pageSize + 16 + 2 * 3
            bytes[at] = 1  // an odd offset: no node starts there
            bytes[at + 1] = 0
        }) { recovery, _, last in
            #expect(recovery.unreadableRecords == 1)
            #expect(recovery.readableRecords == Int(last.rawValue) - 1)
            #expect(recovery.damagedPages == 1)
            #expect(recovery.recoveredLocalRows == ["notes": 239])
        }
    }

    @Test("a record's overflow page damaged: that record is lost, its leaf's other records are read, one damaged page")
    func damagedOverflow() async throws {
        try await Self.recover(damage: { bytes, pageSize, leaves in
            let big = leaves.flatMap(\.nodes).compactMap(\.overflow)
            #expect(big.count == 1)
            for i in 0..<16 { bytes[big[0] * pageSize + i] = 0 }
        }) { recovery, store, last in
            #expect(recovery.unreadableRecords == 1)
            #expect(recovery.readableRecords == Int(last.rawValue) - 1)
            #expect(recovery.damagedPages == 1)
            #expect(recovery.recoveredLocalRows == ["notes": 239])
            let ids = try store.snapshot("notes").rows.map(\.id)
            #expect(!ids.contains("n100"))
            #expect(ids.contains("n101"))
        }
    }

    @Test("a compacted store: rows come back from the checkpoint, records the checkpoint removed are not counted as lost")
    func compactedStore() async throws {
        try await withTemporaryDirectory { parent in
            let directory = parent.appendingPathComponent("store")
            var configuration = Configuration.test()
            configuration.sendsMutations = false
            let last: LSN
            do {
                let store = try Store(directory: directory, configuration: configuration, dependencies: .test())
                defer { store.close() }
                try await store.append(replace(rows("1", "2")), to: "todos")
                for n in 0..<30 { try await store.localWrite("notes", [.upsert(Self.note("n\(n)"))]) }
                try await store.localWrite("notes", [.delete(id: "n3")])
                let mutation = Mutation(name: "editTodo", ops: [.upsert(row("1", "edit"), in: "todos")], request: .init(method: .put, path: "/todos/1"))
                try await store.append(.mutationProposed(Event.MutationProposed(id: DamagedStoreFixture.pendingIDs[0], mutation: mutation)), to: "todos")
                let report = try store.compact(keeping: .zero)
                #expect(report.keptRecords == 1)
                for n in 30..<35 { try await store.localWrite("notes", [.upsert(Self.note("n\(n)"))]) }
                last = store.lastLSN
            }
            let (store, recovery) = try await Store.recoverDamaged(directory: directory, configuration: configuration, dependencies: .test())
            defer { store.close() }
            // In the log: the kept proposal, the checkpoint, the five local writes after it.
            #expect(recovery.readableRecords == 7)
            #expect(recovery.unreadableRecords == 0)
            #expect(recovery.damagedPages == 0)
            #expect(recovery.continuedAfter == last)
            #expect(recovery.recoveredLocalRows == ["notes": 34])
            #expect(try store.snapshot("notes").rows.map(\.id) == (0..<35).filter { $0 != 3 }.map { "n\($0)" })
            #expect(recovery.recoveredMutations == [DamagedStoreFixture.pendingIDs[0]])
            #expect(try store.verify().problems == [])
        }
    }
}
