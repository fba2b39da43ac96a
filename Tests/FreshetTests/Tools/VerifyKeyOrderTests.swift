import Foundation
@testable import Freshet
import FreshetCommands
import FreshetTesting
@testable import FreshetLMDB
import Synchronization
import Testing
import TestSupport

/// `verify` checks each database's tree in key order (`DataFile.Snapshot.checkKeyOrder`) and
/// looks keys up (`mdb_get`) only in a database whose tree fails that check: on a healthy store
/// it looks nothing up, and a damaged separator in a branch page still gets the lookups'
/// problems, byte for byte as before.
@Suite("freshet verify: trees checked in key order instead of a lookup per key", .scaledTimeLimit(minutes: 1))
struct VerifyKeyOrderTests {
    /// What the hooks saw in one `verify`: each database's check ("ok" or why it failed) and
    /// its lookups.
    struct Seen: Sendable {
        var checked: [String: String] = [:]
        var lookups: [String: Int] = [:]
    }

    /// Verifies the open `store` with hooks that record the checks and lookups.
    static func verify(_ store: Store, checksKeyOrder: Bool = true) throws -> (report: VerifyReport, seen: Seen) {
        let seen = Mutex(Seen())
        var hooks = VerifyHooks()
        hooks.checksKeyOrder = checksKeyOrder
        hooks.keyOrderChecked = { name, refusal in seen.withLock { $0.checked[name] = refusal.map { "\($0)" } ?? "ok" } }
        hooks.lookedUp = { name, lookups in seen.withLock { $0.lookups[name, default: 0] += lookups } }
        let report = try store.verify(hooks: hooks)
        return (report, seen.withLock { $0 })
    }

    /// ``verify(_:checksKeyOrder:)`` of the store in `directory`, opened for the call.
    static func verify(_ directory: URL, checksKeyOrder: Bool = true) throws -> (report: VerifyReport, seen: Seen) {
        var configuration = Configuration.test()
        configuration.sendsMutations = false
        let store = try Store(directory: directory, configuration: configuration, dependencies: .test())
        defer { store.close() }
        return try verify(store, checksKeyOrder: checksKeyOrder)
    }

    /// A report's fields, to compare two reports.
    static func fields(_ report: VerifyReport) -> (Int, LSN, Int, [StoreProblem]) {
        (report.recordCount, report.lastLSN, report.comparedEntries, report.problems)
    }

    /// Every database's check passed.
    static let allSound = Dictionary(uniqueKeysWithValues: StoreDatabases.names.map { ($0, "ok") })

    /// Entries and tree depth of each database of `store`.
    static func shape(_ store: Store) throws -> (entries: [String: Int], depths: [String: Int]) {
        let dbs = store.state.dbs
        let all = [dbs.log, dbs.rows, dbs.rowIndex, dbs.marks, dbs.meta, dbs.pending, dbs.mutations, dbs.idMap, dbs.confirmed]
        var entries: [String: Int] = [:], depths: [String: Int] = [:]
        try store.env.read { txn in
            for db in all {
                let statistics = try txn.statistics(db)
                entries[db.name] = statistics.entries
                depths[db.name] = statistics.depth
            }
        }
        return (entries, depths)
    }

    /// Rows in ``withDeepStore(_:)``.
    static let deepRows = 24_000

    /// A closed store whose collection `big` holds ``deepRows`` rows `r00000` … (one `fetched`
    /// of 4,000 rows per record): enough that `rows` is three levels deep, `rowIndex` two.
    func withDeepStore(_ body: (URL) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            var configuration = Configuration.test()
            configuration.mapSize = 1 << 27
            let store = try Store(directory: directory, configuration: configuration, dependencies: .test())
            for start in stride(from: 0, to: Self.deepRows, by: 4000) {
                let rows = (start..<start + 4000).map { row(String(format: "r%05d", $0)) }
                try await store.append(.fetched(.init(placement: .upsert, rows: rows, response: response())), to: "big")
            }
            let (entries, depths) = try Self.shape(store)
            #expect(entries["rowIndex"] == Self.deepRows && entries["rows"] == Self.deepRows)
            #expect(depths == ["log": 1, "rows": 3, "rowIndex": 2, "marks": 1, "meta": 1, "pending": 0, "mutations": 0, "idMap": 0, "confirmed": 0])
            store.close()
            try await body(directory)
        }
    }

    /// `rows`' root page in `directory/data.mdb`, from its record in the main tree.
    static func rowsRoot(_ directory: URL) throws -> Int {
        let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
        defer { store.close() }
        let record = try store.env.read { txn in try txn.get(Database.main, key: Array("rows".utf8)) }
        let bytes = try #require(record)
        return try #require(DataFile.tree(bytes, at: 0).root)
    }

    /// Node `node`'s key of page `page` in `file` (its offset in the file and its bytes):
    /// the node's offset is at 16 + 2·node, its key size at 6 and its key at 8 (lmdb.h's layout).
    static func nodeKey(_ file: [UInt8], page: Int, node: Int, pageSize: Int = 4096) -> (offset: Int, key: [UInt8]) {
        func u16(_ at: Int) -> Int { Int(file[at]) | Int(file[at + 1]) << 8 }
        let start = page * pageSize
        let at = start + u16(start + 16 + 2 * node)
        return (at + 8, Array(file[at + 8 ..< at + 8 + u16(at + 6)]))
    }

    /// The position of a `rows` key of `big` (prefix ‖ 8 bytes big-endian: page << 32 | index).
    static func position(_ key: [UInt8]) -> UInt64 { key.dropFirst(VerifyLookupTests.prefix.count).reduce(0) { $0 << 8 | UInt64($1) } }

    /// The lookup of the row at `index` of page 0 (row `r` and `index`: the rows of the
    /// upserts take positions 0, 1, … in the order given) missed; the last record wrote it.
    static func lookupMiss(_ index: UInt64) -> StoreProblem {
        StoreProblem(database: "rows", collection: "big", rowID: String(format: "r%05d", index), lsn: LSN(UInt64(deepRows / 4000)),
                     message: "a lookup does not find it (damaged index page?) (page 0, index \(index))")
    }

    @Test("the demo log's store: every tree passes its check, no key is looked up; without the checks every key is")
    func demoStore() async throws {
        try await offPool {
            let log = try ExportedLog(contentsOf: LogToolTests.DemoLogReplayTests.fixture)
            try await withTemporaryDirectory { directory in
                let clock = try log.testClock()
                var configuration = Configuration(durability: .none)
                configuration.sendsMutations = false
                let store = try log.makeStore(in: directory, configuration: configuration, dependencies: .test(clock: clock, transport: ScriptedTransport(clock: clock)))
                defer { store.close() }
                let checked = try Self.verify(store)
                #expect(checked.report.problems == [])
                #expect(checked.report.recordCount == 28)
                #expect(checked.seen.checked == Self.allSound)
                #expect(checked.seen.lookups == [:])
                let looked = try Self.verify(store, checksKeyOrder: false)
                #expect(Self.fields(looked.report) == Self.fields(checked.report))
                #expect(looked.seen.checked == [:])
                #expect(looked.seen.lookups == (try Self.shape(store).entries))
                #expect(looked.seen.lookups["log"] == 28)
            }
        }
    }

    @Test("trees three levels deep pass their checks: no key is looked up, and the report is the lookups' one")
    func deepTrees() async throws {
        try await offPool {
            try await withDeepStore { directory in
                let checked = try Self.verify(directory)
                #expect(checked.report.problems == [])
                #expect(checked.seen.checked == Self.allSound)
                #expect(checked.seen.lookups == [:])
                let looked = try Self.verify(directory, checksKeyOrder: false)
                #expect(Self.fields(looked.report) == Self.fields(checked.report))
                #expect(looked.seen.lookups["rowIndex"] == Self.deepRows)
                #expect(looked.seen.lookups["rows"] == Self.deepRows)
            }
        }
    }

    /// Verifies the damaged store in `directory` with and without the checks, expects both to
    /// report `problems`, only `rows`' check to fail (with `refusal` in its reason) and only
    /// `rows` to be looked up; then the `freshet` binary's output.
    func expectRowsRefused(_ directory: URL, refusal: String, problems: [StoreProblem]) throws {
        let checked = try Self.verify(directory)
        #expect(checked.report.problems == problems)
        var expected = Self.allSound
        expected["rows"] = nil
        let reason = try #require(checked.seen.checked["rows"])
        #expect(reason.contains(refusal), "\(reason)")
        var others = checked.seen.checked
        others["rows"] = nil
        #expect(others == expected)
        #expect(checked.seen.lookups == ["rows": Self.deepRows])
        let looked = try Self.verify(directory, checksKeyOrder: false)
        #expect(Self.fields(looked.report) == Self.fields(checked.report))
        let run = runTool(["verify", directory.path])
        #expect(run.status == 1)
        #expect(run.stdout == problems.map { "PROBLEM  \($0)" })
    }

    /// Rewrites the separator of node 1 of `rows`' root page in `directory/data.mdb` (a key of
    /// prefix ‖ 8-byte position) with the bytes `change` returns for it (as many), and returns
    /// the position it held.
    func rewriteRowsRootSeparator(in directory: URL, _ change: ([UInt8]) -> [UInt8]) throws -> UInt64 {
        let root = try Self.rowsRoot(directory)
        let path = directory.appendingPathComponent("data.mdb").path
        var file = Array(try #require(FileManager.default.contents(atPath: path)))
        let (offset, key) = Self.nodeKey(file, page: root, node: 1)
        try #require(key.count == VerifyLookupTests.prefix.count + 8 && key.starts(with: VerifyLookupTests.prefix))
        let changed = change(key)
        try #require(changed.count == key.count)
        file.replaceSubrange(offset ..< offset + key.count, with: changed)
        try Data(file).write(to: URL(fileURLWithPath: path))
        return Self.position(key)
    }

    @Test("a root separator of rows (three levels) raised by one still sorts, but sends the lookup of its subtree's first key to the child before: the check refuses the tree, the lookups name the key")
    func raisedRootSeparator() async throws {
        try await offPool {
            try await withDeepStore { directory in
                let position = try rewriteRowsRootSeparator(in: directory) { key in
                    #expect(key.last != 0xFF)
                    return key.dropLast() + [key[key.count - 1] &+ 1]
                }
                try expectRowsRefused(directory, refusal: "below the separator that leads to its subtree", problems: [Self.lookupMiss(position)])
            }
        }
    }

    @Test("a root separator of rows (three levels) lowered to the last key before it still sorts, but sends that key's lookup to the next child: the check refuses the tree, the lookups name the key")
    func loweredRootSeparator() async throws {
        try await offPool {
            try await withDeepStore { directory in
                // The position before, in place: 8 bytes big-endian.
                let position = try rewriteRowsRootSeparator(in: directory) { key in
                    let before = Self.position(key) - 1
                    return key.dropLast(8) + (0..<8).reversed().map { UInt8(truncatingIfNeeded: before >> (8 * UInt64($0))) }
                }
                try expectRowsRefused(directory, refusal: "not above the last key of the subtree before it", problems: [Self.lookupMiss(position - 1)])
            }
        }
    }
}
