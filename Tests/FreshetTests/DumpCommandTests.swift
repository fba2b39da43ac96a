import Foundation
import FreshetCommands
import Synchronization
import Testing
@testable import Freshet
@testable import FreshetLMDB

/// The outputs of one `Tool.run`.
struct ToolRun {
    var status: Int32
    var stdout: [String]
    var stderr: [String]
}

func runTool(_ arguments: [String]) -> ToolRun {
    let out = Mutex<[String]>([])
    let err = Mutex<[String]>([])
    let tool = Tool(standardOutput: { line in out.withLock { $0.append(line) } },
                    standardError: { line in err.withLock { $0.append(line) } })
    let status = tool.run(arguments)
    return ToolRun(status: status, stdout: out.withLock { $0 }, stderr: err.withLock { $0 })
}

/// Builds a closed store with five events of four kinds and runs `body` with its directory.
func withDumpableStore<R>(_ body: (URL) async throws -> R) async throws -> R {
    try await withTemporaryDirectory { directory in
        let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
        try await store.localWrite("favourites", [.upsert(row("25", "pikachu")), .upsert(row("133", "eevee")), .delete(id: "1")])
        try await store.append(.fetched(.init(placement: .page(index: 0, isLast: false), rows: rows("1", "2", "3"),
                                              response: ResponseInfo(url: "http://h/api/v2/pokemon/?limit=3", status: 200, etag: #""e1""#, durationMicros: 1_500, responseBytes: 2_048),
                                              nextCursor: "http://h/api/v2/pokemon/?offset=3&limit=3")), to: "pokemon")
        try await store.append(.fetchFailed(.init(url: "http://h/api/v2/pokemon/?offset=3&limit=3", reason: "httpStatus", status: 500, message: "answered 500")), to: "pokemon")
        try await store.invalidate("pokemon", reason: "pulled to refresh")
        try await store.append(.fetched(.init(placement: .upsert, rows: [row("25")], response: ResponseInfo(url: "http://h/api/v2/pokemon/25/", status: 200))), to: "pokemon-detail")
        store.close()
        return try await body(directory)
    }
}

@Suite("freshet dump")
struct DumpCommandTests {
    @Test("dump prints one line per event with its LSN, time, kind, collection and summary")
    func textDump() async throws {
        try await withDumpableStore { directory in
            let run = runTool(["dump", directory.path])
            #expect(run.status == 0)
            #expect(run.stderr == [])
            let t = TestClock.nowISO
            #expect(run.stdout == [
                "     1  \(t)  localWrite         favourites      upsert 25, upsert 133, delete 1",
                "     2  \(t)  fetched            pokemon         page 0 (http://h/api/v2/pokemon/?limit=3), 3 rows (1 … 3), keeps later pages, 200, ETag \"e1\", 1.5 ms, 2048 bytes",
                "     3  \(t)  fetchFailed        pokemon         attempt 1: httpStatus 500 — answered 500",
                "     4  \(t)  invalidated        pokemon         invalidated: pulled to refresh",
                "     5  \(t)  fetched            pokemon-detail  upsert 1 row (25), 200, 0.0 ms, 0 bytes",
            ])
        }
    }

    @Test("dump --json prints JSON Lines with the exact lsn, kind and collection")
    func jsonDump() async throws {
        try await withDumpableStore { directory in
            let run = runTool(["dump", directory.path, "--json"])
            #expect(run.status == 0)
            #expect(run.stderr == [])
            let objects = try run.stdout.map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            }
            #expect(objects.map { $0["lsn"] as? Int } == [1, 2, 3, 4, 5])
            #expect(objects.map { $0["kind"] as? String } == ["localWrite", "fetched", "fetchFailed", "invalidated", "fetched"])
            #expect(objects.map { $0["collection"] as? String } == ["favourites", "pokemon", "pokemon", "pokemon", "pokemon-detail"])
            #expect(objects.allSatisfy { $0["time"] as? String == TestClock.nowISO })
            #expect(objects[1]["placement"] as? String == "page")
            #expect(objects[1]["page"] as? Int == 0)
            #expect(objects[1]["isLastPage"] as? Bool == false)
            #expect(objects[1]["rowIDs"] as? [String] == ["1", "2", "3"])
            #expect(objects[1]["nextCursor"] as? String == "http://h/api/v2/pokemon/?offset=3&limit=3")
            #expect((objects[1]["response"] as? [String: Any])?["etag"] as? String == #""e1""#)
            #expect(objects[2]["reason"] as? String == "httpStatus")
            #expect(objects[2]["status"] as? Int == 500)
            #expect(objects[3]["reason"] as? String == "pulled to refresh")
            let ops = try #require(objects[0]["ops"] as? [[String: String]])
            #expect(ops == [["op": "upsert", "id": "25"], ["op": "upsert", "id": "133"], ["op": "delete", "id": "1"]])
        }
    }

    @Test("dump filters by LSN range and collection", arguments: [
        (["--from", "2"], [2, 3, 4, 5]),
        (["--to", "2"], [1, 2]),
        (["--from", "2", "--to", "3"], [2, 3]),
        (["--collection", "pokemon"], [2, 3, 4]),
        (["--collection", "pokemon", "--from", "4"], [4]),
        (["--from", "5"], [5]),
    ])
    func filters(options: [String], expected: [Int]) async throws {
        try await withDumpableStore { directory in
            let run = runTool(["dump", directory.path, "--json"] + options)
            #expect(run.status == 0)
            let lsns = try run.stdout.map { line in
                try #require((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["lsn"] as? Int)
            }
            #expect(lsns == expected)
        }
    }

    @Test("a missing store directory exits 2 with one line on stderr")
    func missingDirectory() async throws {
        try await withTemporaryDirectory { directory in
            let run = runTool(["dump", directory.path])
            #expect(run.status == 2)
            #expect(run.stdout == [])
            #expect(run.stderr == ["freshet: cannot open store \(directory.path): \(directory.path) does not exist"])
            #expect(!FileManager.default.fileExists(atPath: directory.path))
        }
    }

    @Test("a directory without a store exits 2 with one line on stderr")
    func emptyDirectory() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let run = runTool(["dump", directory.path])
            #expect(run.status == 2)
            #expect(run.stdout == [])
            #expect(run.stderr == ["freshet: cannot open store \(directory.path): \(directory.path) holds no Freshet store (no data.mdb)"])
        }
    }

    @Test("usage errors exit 2 with one line on stderr", arguments: [
        (["dump", "/tmp/x", "--bogus"], "freshet: dump: unknown option --bogus; try `freshet help dump`"),
        ([], "freshet: missing command; try `freshet help`"),
        (["frob"], "freshet: unknown command \"frob\"; try `freshet help`"),
        (["dump"], "freshet: dump: missing store directory (freshet dump DIR)"),
        (["dump", "/tmp/x", "/tmp/y"], #"freshet: dump: unexpected argument "/tmp/y""#),
        (["dump", "/tmp/x", "--from"], "freshet: --from needs a value"),
        (["dump", "/tmp/x", "--to", "ten"], "freshet: --to needs an LSN (a whole number), got \"ten\""),
        (["dump", "/tmp/x", "--collection", "--json"], "freshet: --collection needs a value"),
    ])
    func usageErrors(arguments: [String], message: String) {
        let run = runTool(arguments)
        #expect(run.status == 2)
        #expect(run.stdout == [])
        #expect(run.stderr == [message])
    }

    @Test("help prints the usage and exits 0")
    func help() {
        let run = runTool(["help"])
        #expect(run.status == 0)
        #expect(run.stdout == [Command.usage])
        #expect(run.stderr == [])
    }

    @Test("dump of a store this process has open exits 2 with alreadyOpen")
    func storeOpenInProcess() async throws {
        try await withTemporaryStore { store in
            try await store.invalidate("pokemon")
            let run = runTool(["dump", store.directory.path])
            #expect(run.status == 2)
            #expect(run.stdout == [])
            #expect(run.stderr.count == 1)
            #expect(run.stderr.first?.contains("already open in this process") == true)
        }
    }

    @Test("a record that fails its checksum is dumped as UNREADABLE, the others still print, exit 1")
    func unreadableRecord() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            try await store.invalidate("a")
            try await store.invalidate("b")
            try await store.invalidate("c")
            var damaged = LogRecord(lsn: 2, timestamp: TestClock.now, collection: "b", event: .invalidated(.init())).encoded()
            damaged[22] ^= 0x01 // first byte of the collection name: "b" → "c"
            try overwriteLogRecord(in: store, at: 2, with: damaged)
            var entries: [String] = []
            try store.readLog { entry in
                switch entry {
                case .record(let record): entries.append("\(record.lsn) \(record.collection)")
                case .unreadable(let lsn, let error): entries.append("\(lsn) \(error.code)")
                }
                return true
            }
            #expect(entries == ["1 a", "2 checksumMismatch", "3 c"])
            store.close()

            let run = runTool(["dump", directory.path])
            #expect(run.status == 1)
            try #require(run.stdout.count == 3, "stderr: \(run.stderr)")
            #expect(run.stdout[1].hasPrefix("     2  UNREADABLE  record at LSN 2 fails its CRC-32C: stored 0x"))
            #expect(run.stderr == ["freshet: 1 unreadable record in \(directory.path)"])

            let json = runTool(["dump", directory.path, "--json"])
            #expect(json.status == 1)
            try #require(json.stdout.count == 3, "stderr: \(json.stderr)")
            let second = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout[1].utf8)) as? [String: Any])
            #expect(second["lsn"] as? Int == 2)
            #expect(second["kind"] as? String == "unreadable")
        }
    }
}

/// Stores `bytes` under `lsn` in the log, bypassing the writer (to plant a damaged record).
func overwriteLogRecord(in store: Store, at lsn: LSN, with bytes: [UInt8]) throws {
    try store.env.write { txn in
        try txn.put(store.state.dbs.log, key: lsn.keyBytes, value: bytes)
    }
}
