import Foundation
@testable import Freshet
import FreshetCommands
@testable import FreshetLMDB
import Testing

/// A log key damaged in its leaf (trial 16 finding 2: one flipped byte turned LSN 6's key
/// into 4278190086, out of key order): every tool reads on past it, as `dump` did, counts it
/// as one unreadable record named by its LSN and its key (``LogPosition``), and exits 1;
/// none takes the key for the end of the log and silently leaves LSNs 7 … out.
@Suite("Damaged log key: every tool reads on past it and reports it", .scaledTimeLimit(minutes: 1))
struct DamagedLogKeyTests {
    /// Records in the store: LSN n is a local write of row `r<n>` to `notes`.
    static let count = 10
    /// The key LSN 6 reads after the flip (byte 4 of its 8-byte big-endian key, xor 0xFF).
    static let damagedKey: UInt64 = 4_278_190_086

    /// The problem every tool reports for it.
    static let problem = StoreProblem(database: "log", lsn: LSN(6),
                                      message: "its key is damaged: it reads 4278190086, the record stored under it (CRC-32C intact) is LSN 6; the record is skipped")

    /// Builds the store in `directory`, closes it, and flips byte 4 of LSN 6's key in the log's
    /// leaf page (the log is one page: its root).
    static func build(in directory: URL) async throws {
        var configuration = Configuration.test()
        configuration.sendsMutations = false
        let store = try Store(directory: directory, configuration: configuration, dependencies: .test())
        for n in 1...count {
            try await store.localWrite("notes", [.upsert(row("r\(n)", "note \(n)"))])
        }
        try flip(store, in: directory)
    }

    /// Closes `store` and flips byte 4 of LSN 6's key in its log's one page.
    static func flip(_ store: Store, in directory: URL) throws {
        let record = try store.env.read { txn in try txn.get(Database.main, key: Array("log".utf8)) }
        let tree = DataFile.tree(try #require(record), at: 0)
        let depth = try store.env.read { txn in try txn.statistics(store.state.dbs.log).depth }
        store.close()
        try #require(depth == 1)
        let root = try #require(tree.root)
        let path = directory.appendingPathComponent("data.mdb").path
        var file = Array(try #require(FileManager.default.contents(atPath: path)))
        let (offset, key) = VerifyKeyOrderTests.nodeKey(file, page: root, node: 5)
        try #require(key == LSN(6).keyBytes)
        file[offset + 4] ^= 0xFF
        try Data(file).write(to: URL(fileURLWithPath: path))
    }

    func withDamagedStore(_ body: (URL) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            try await Self.build(in: directory)
            try await body(directory)
        }
    }

    static func open(_ directory: URL) throws -> Store {
        var configuration = Configuration.test()
        configuration.sendsMutations = false
        return try Store(directory: directory, configuration: configuration, dependencies: .test())
    }

    /// The log's keys as stored and what ``LogPosition`` reads of each, in one cursor walk.
    static func walk(_ store: Store) throws -> (keys: [UInt64], positions: [(LSN, LSN?)]) {
        var keys: [UInt64] = []
        var positions: [(LSN, LSN?)] = []
        try store.env.read { txn in
            try txn.forEach(store.state.dbs.log) { key, value in
                keys.append(Keys.readUInt64(key, at: 0))
                let p = LogPosition(key: key, value: value)
                positions.append((p.lsn, p.damagedKey))
                return true
            }
        }
        return (keys, positions)
    }

    /// The intact LSNs: all but 6.
    static let intact = (1...count).filter { $0 != 6 }.map { UInt64($0) }

    @Test("the damaged key stands for LSN 6 (its record's own LSN, under an intact CRC); the log ends at 10")
    func position() async throws {
        try await withDamagedStore { directory in
            let store = try Self.open(directory)
            defer { store.close() }
            let (keys, positions) = try Self.walk(store)
            // A cursor walk meets the keys in the leaf's order: the damaged one where LSN 6 was.
            #expect(keys == [1, 2, 3, 4, 5, Self.damagedKey, 7, 8, 9, 10])
            #expect(positions.map(\.0) == (1...10).map { LSN(UInt64($0)) })
            #expect(positions.map(\.1) == [nil, nil, nil, nil, nil, LSN(Self.damagedKey), nil, nil, nil, nil])
            let end = try LogFolder.logEnd(of: store)
            #expect(end.last == LSN(10) && end.assigned == LSN(10))
        }
    }

    @Test("dump: all ten entries, LSN 6 unreadable naming its key; one problem, exit 1")
    func dump() async throws {
        try await withDamagedStore { directory in
            let run = runTool(["dump", directory.path])
            #expect(run.status == 1)
            #expect(run.stdout.count == 10)
            #expect(run.stdout.map { $0.split(separator: " ").first.map(String.init) ?? "" } == (1...10).map { "\($0)" })
            #expect(run.stdout[5] == "     6  UNREADABLE  \(Self.problem.message)")
            #expect(run.stderr == ["freshet: 1 unreadable record in \(directory.path)"])
            // From LSN 7 on: the search for key 7 lands on the damaged key, which is skipped.
            let tail = runTool(["dump", directory.path, "--from", "7"])
            #expect(tail.status == 0)
            #expect(tail.stdout.map { $0.split(separator: " ").first.map(String.init) ?? "" } == ["7", "8", "9", "10"])
            #expect(tail.stderr == [])
            let json = runTool(["dump", directory.path, "--json", "--from", "6", "--to", "6"])
            #expect(json.status == 1)
            #expect(json.stdout.count == 1)
            #expect(json.stdout.first?.contains("\"lsn\":6") == true)
        }
    }

    @Test("stats: ten records, one unreadable, none missing, newest LSN 10; exit 1")
    func stats() async throws {
        try await withDamagedStore { directory in
            let store = try Self.open(directory)
            let s = try store.statistics()
            store.close()
            #expect(s.records == 10)
            #expect(s.unreadableRecords == 1)
            #expect(s.missingRecords == [])
            #expect(s.recordsByKind == ["localWrite": 9])
            #expect(s.oldest?.lsn == LSN(1))
            #expect(s.newest?.lsn == LSN(10))
            let run = runTool(["stats", directory.path])
            #expect(run.status == 1)
            #expect(run.stdout.contains { $0.hasPrefix("records      10 (1 unreadable)") })
            #expect(run.stderr == ["freshet: 1 unreadable record in \(directory.path)"])
        }
    }

    @Test("export: every intact record (1…5, 7…10), LSN 6 skipped and named on stderr; exit 1")
    func export() async throws {
        try await withDamagedStore { directory in
            let store = try Self.open(directory)
            var lines: [String] = []
            let result = try store.exportLog { lines.append($0) }
            store.close()
            #expect(result.written == 9)
            #expect(result.skipped == [Self.problem])
            #expect(result.missing == [])
            let lsns = try lines.map { line in
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                return try #require(object["lsn"] as? UInt64)
            }
            #expect(lsns == Self.intact)
            let run = runTool(["export", directory.path])
            #expect(run.status == 1)
            #expect(run.stdout == lines)
            #expect(run.stderr == ["freshet: skipped: \(Self.problem)"])
        }
    }

    @Test("replay and why: fold 1…5 and 7…10 (nine rows), LSN 6 reported; exit 1")
    func replayAndWhy() async throws {
        try await withDamagedStore { directory in
            let store = try Self.open(directory)
            let replay = try store.replay()
            store.close()
            #expect(replay.problems == [Self.problem])
            #expect(replay.lsn == LSN(10))
            #expect(replay.recordCount == 9)
            let ids = replay.snapshots.first { $0.collection == "notes" }?.rows.map(\.id)
            #expect(ids == Self.intact.map { "r\($0)" })
            let run = runTool(["replay", directory.path])
            #expect(run.status == 1)
            #expect(run.stdout.first?.hasSuffix("9 records") == true)
            #expect(run.stderr == ["freshet: skipped: \(Self.problem)"])
            let why = runTool(["why", directory.path, "notes"])
            #expect(why.status == 1)
            #expect(why.stderr == ["freshet: skipped: \(Self.problem)"])
        }
    }

    @Test("replay in chunks of every size meets the damaged key once")
    func chunks() async throws {
        try await withDamagedStore { directory in
            let store = try Self.open(directory)
            defer { store.close() }
            for size in 1...11 {
                let folder = try LogFolder(store: store, chunkSize: size)
                var folded: [UInt64] = []
                try folder.run(to: .end, visit: { folded.append($0.lsn.rawValue) })
                #expect(folded == Self.intact, "chunks of \(size)")
                #expect(folder.problems == [Self.problem], "chunks of \(size)")
            }
        }
    }

    @Test("verify: names the damaged key of LSN 6 in the log first; exit 1")
    func verify() async throws {
        try await withDamagedStore { directory in
            let store = try Self.open(directory)
            let report = try store.verify()
            store.close()
            #expect(report.problems.first == Self.problem)
            #expect(report.recordCount == 9)
            #expect(report.lastLSN == LSN(10))
            let run = runTool(["verify", directory.path])
            #expect(run.status == 1)
            #expect(run.stdout.first == "PROBLEM  \(Self.problem)")
            #expect(run.stderr.first?.hasSuffix("first: \(Self.problem)") == true)
        }
    }
}
