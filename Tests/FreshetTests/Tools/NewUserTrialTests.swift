import Foundation
import ProcessSupport
import Freshet
import FreshetCommands
@testable import FreshetLMDB
import Testing
import TestSupport

extension LogToolTests {
    /// What a new user's trial of `freshet` found: server-chosen strings printed raw, rows that
    /// are not JSON imported, `--at` missing a record printed by `dump`, silent exit codes,
    /// `why`'s LSN, and small command-line edges.
    @Suite("freshet after a new user's trial")
    struct NewUserTrialTests {
        /// 2026-12-01T03:20:58Z in microseconds.
        static let base: Int64 = 1_796_095_258_000_000

        /// One export line of a `fetched` (replace) record.
        static func fetched(_ lsn: Int, micros: Int64, collection: String, rows: String, etag: String? = nil) -> String {
            let tag = etag.map { #","etag":\#($0)"# } ?? ""
            return #"{"lsn":\#(lsn),"micros":\#(micros),"kind":"fetched","collection":\#(collection),"event":{"placement":"replace","rows":\#(rows),"response":{"url":"http://h/list","status":200\#(tag),"durationMicros":0,"responseBytes":0,"requestBytes":0}}}"#
        }

        /// One export line of a `localWrite` upserting one row.
        static func localWrite(_ lsn: Int, micros: Int64, collection: String, id: String, json: String) -> String {
            #"{"lsn":\#(lsn),"micros":\#(micros),"kind":"localWrite","collection":\#(collection),"event":{"ops":[{"op":"upsert","row":{"id":\#(id),"json":\#(json)}}]}}"#
        }

        /// Imports `lines` into a new store and runs `body` with its directory.
        func withImported<R>(_ lines: [String], _ body: (URL) async throws -> R) async throws -> R {
            try await withTemporaryDirectory { directory in
                try Store.importLog(lines: lines, into: directory)
                return try await body(directory)
            }
        }

        /// Imports two `fetched` records of collection "a", stamped `base + micros.0` and
        /// `base + micros.1` µs, and runs `body` with the store's directory and the times `dump`
        /// prints for the two records.
        func withTwoStamps(_ micros: (Int64, Int64), rows: (String, String), _ body: (URL, [Substring]) async throws -> Void) async throws {
            let lines = [
                Self.fetched(1, micros: Self.base + micros.0, collection: #""a""#, rows: rows.0),
                Self.fetched(2, micros: Self.base + micros.1, collection: #""a""#, rows: rows.1),
            ]
            try await withImported(lines) { directory in
                let printed = runTool(["dump", directory.path]).stdout.map { $0.split(separator: " ", omittingEmptySubsequences: true)[1] }
                try await body(directory, printed)
            }
        }

        /// Writes `text` to a new file and runs `body` with its path and a directory that does not exist yet.
        func withFile<R>(_ text: String, _ body: (String, URL) async throws -> R) async throws -> R {
            try await withTemporaryDirectory { directory in
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let file = directory.appendingPathComponent("log.jsonl")
                try Data(text.utf8).write(to: file)
                return try await body(file.path, directory.appendingPathComponent("store"))
            }
        }

        // A row ID that sets the terminal title and splits the line, an ETag with a colour
        // escape, a collection name with a right-to-left override, a row value holding one.
        static let hostile = [
            fetched(1, micros: base + 464_512, collection: #""todo\u202es""#, rows: #"[{"id":"/x/e\u001b]0;TITLE\u0007id\n2/","json":"{\"t\":\"a\\\"b\u202e\"}"}]"#,
                    etag: #""\"e\u001b[31m\"""#),
            #"{"lsn":2,"micros":\#(base + 900_000),"kind":"fetchFailed","collection":"todo\u202es","event":{"url":"http://h/list","reason":"crossOrigin","message":"next URL http://ev\u001b]0;pwned\u0007il:8080/list is on another origin","attempt":1}}"#,
        ]

        @Test("replay, stats and why escape row IDs, ETags, collection names, row values and messages: one record, one line")
        func escaping() async throws {
            try await withImported(Self.hostile) { directory in
                let replay = runTool(["replay", directory.path, "--to", "1"])
                #expect(replay.status == 0)
                #expect(replay.stdout == [
                    "replay of \(directory.path) through LSN 1 (2026-12-01T03:20:58.464Z), 1 record",
                    "",
                    #"todo\u{202E}s  1 row  stale  LSN 1"#,
                    #"  SyncMark  fetched LSN 1 at 2026-12-01T03:20:58.464Z, validated 2026-12-01T03:20:58.464Z, ETag "e\u{1B}[31m""#,
                    #"  /x/e\u{1B}]0;TITLE\u{7}id\n2/  {"t":"a\"b\u202E"}"#,
                    "",
                    "pending mutations: none",
                ])
                let stats = runTool(["stats", directory.path])
                #expect(stats.stdout.last == #"  todo\u{202E}s  2 records  253 log bytes  1 row  35 row bytes"#)
                // At LSN 2 (0.436 s after the fetch), so the freshness that ends the line is fixed.
                let why = runTool(["why", directory.path, "todo\u{202E}s", "--lsn", "2"])
                #expect(why.status == 0)
                #expect(why.stdout.first == #"todo\u{202E}s: failing since 2026-12-01T03:20:58.900Z (LSN 2): 1 failed attempt, last crossOrigin: next URL http://ev\u{1B}]0;pwned\u{7}il:8080/list is on another origin; showing rows last synced at 2026-12-01T03:20:58.464Z; stale for 0 s (no max-age, Expires or Last-Modified, age 0 s)"#)
                for line in replay.stdout + stats.stdout + why.stdout + why.stderr {
                    #expect(!line.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{202E}" })
                }
            }
        }

        @Test("verify's PROBLEM line and its summary on standard error escape the row ID")
        func verifyEscaping() async throws {
            try await withImported(Self.hostile) { directory in
                try withRawEnvironment(directory) { env, dbs in
                    try env.write { txn in
                        let rows = try #require(dbs["rows"])
                        let key = rowKey("todo\u{202E}s", position: 0)
                        var bytes = try #require(try txn.get(rows, key: key))
                        bytes[bytes.count - 3] ^= 0x20
                        try txn.put(rows, key: key, value: bytes)
                    }
                }
                let run = runTool(["verify", directory.path])
                #expect(run.status == 1)
                let problem = #"rows · todo\u{202E}s · row /x/e\u{1B}]0;TITLE\u{7}id\n2/ · LSN 1: stored value differs from the replay (page 0, index 0)"#
                #expect(run.stdout == ["PROBLEM  " + problem])
                #expect(run.stderr == ["freshet: 1 problem in \(directory.path); first: " + problem])
            }
        }

        @Test("import refuses a row value that is not JSON, naming the line, and creates nothing", arguments: [
            (#""{\"i\":}""#, #"line 2: event.rows[0]: json is not a JSON value (unexpected "}" at byte 5)"#),
            (#""1}\n{\"evil\":true""#, "line 2: event.rows[0]: json is not a JSON value (content after the JSON value at byte 1)"),
        ])
        func importRefusesNonJSONRows(json: String, message: String) async throws {
            let text = Self.fetched(1, micros: Self.base, collection: #""a""#, rows: #"[{"id":"1","json":"{}"}]"#) + "\n"
                + Self.fetched(2, micros: Self.base + 1, collection: #""a""#, rows: #"[{"id":"1","json":\#(json)}]"#) + "\n"
            try await withFile(text) { file, store in
                let run = runTool(["import", store.path, file])
                #expect(run.status == 2)
                #expect(run.stderr == ["freshet: \(file): \(message)"])
                #expect(!FileManager.default.fileExists(atPath: store.path))
            }
        }

        @Test("import refuses a collection name with a control character, as the store does")
        func importRefusesBadNames() async throws {
            let text = Self.fetched(1, micros: Self.base, collection: #""a\u0007b""#, rows: #"[{"id":"1","json":"{}"}]"#)
            try await withFile(text) { file, store in
                let run = runTool(["import", store.path, file])
                #expect(run.status == 2)
                #expect(run.stderr == [#"freshet: \#(file): line 1: collection name "a\u{07}b" must be 1 to 200 bytes of UTF-8 without control characters"#])
            }
        }

        @Test("replay --at with a time printed by dump takes that record: times compare to the millisecond")
        func atPrintedTime() async throws {
            try await withTwoStamps((464_512, 465_500), rows: (#"[{"id":"1","json":"1"}]"#, #"[{"id":"2","json":"2"}]"#)) { directory, printed in
                #expect(printed == ["2026-12-01T03:20:58.464Z", "2026-12-01T03:20:58.465Z"])
                let run = runTool(["replay", directory.path, "--at", "2026-12-01T03:20:58.464Z"])
                #expect(run.status == 0)
                #expect(run.stdout.first == "replay of \(directory.path) through LSN 1 (2026-12-01T03:20:58.464Z), 1 record")
                let before = runTool(["replay", directory.path, "--at", "2026-12-01T03:20:58.463Z"])
                #expect(before.status == 2)
                let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
                defer { store.close() }
                let at = try Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse("2026-12-01T03:20:58.464Z")
                #expect(try store.replay(to: .time(at)).lsn == 1)
                #expect(try store.replay(to: .time(at.addingTimeInterval(0.001))).lsn == 2)
                #expect(try store.why("a", at: .time(at)).timeline.map(\.lsn) == [1])
                // Judged as `--to 1` is: at the record's own stamp (.464512), not at .464000,
                // which is before it ("the clock was moved back": stale).
                #expect(try store.replay(to: .lsn(1)).snapshots.map(\.status) == [.fresh])
                #expect(try store.replay(to: .time(at)).snapshots.map(\.status) == [.fresh])
                let why = try store.why("a", at: .time(at))
                #expect(why.status == .fresh)
                #expect(why.verdict == (try store.why("a", at: .lsn(1))).verdict)
                #expect(why.time == (try store.replay(to: .lsn(1))).time)
            }
        }

        @Test("a stamp on a whole millisecond prints as that millisecond (.001000 is .001, not .000), and --at compares with it")
        func wholeMillisecondStamps() async throws {
            // base is a whole second; .001000 and .004000 as Doubles of seconds are just under.
            try await withTwoStamps((1_000, 4_000), rows: (#"[{"id":"1","json":"1"}]"#, #"[{"id":"1","json":"2"}]"#)) { directory, printed in
                #expect(printed == ["2026-12-01T03:20:58.001Z", "2026-12-01T03:20:58.004Z"])
                #expect(runTool(["replay", directory.path, "--at", "2026-12-01T03:20:58.000Z"]).status == 2)
                let first = runTool(["replay", directory.path, "--at", "2026-12-01T03:20:58.003Z"])
                #expect(first.status == 0)
                #expect(first.stdout.first == "replay of \(directory.path) through LSN 1 (2026-12-01T03:20:58.003Z), 1 record")
                #expect(runTool(["replay", directory.path, "--at", "2026-12-01T03:20:58.004Z"]).stdout.first == "replay of \(directory.path) through LSN 2 (2026-12-01T03:20:58.004Z), 2 records")
                let export = runTool(["export", directory.path])
                #expect(export.stdout.first?.contains(#""time":"2026-12-01T03:20:58.001Z""#) == true)
            }
        }

        @Test("dump and export past the end, dump with --from after --to, and stats with an unreadable record say so and exit non-zero")
        func exitCodes() async throws {
            let lines = (1...3).map { Self.fetched($0, micros: Self.base + Int64($0), collection: #""a""#, rows: #"[{"id":"1","json":"1"}]"#) }
            try await withImported(lines) { directory in
                let path = directory.path
                #expect(runTool(["dump", path, "--from", "99999"]) == ToolRun(status: 2, stdout: [], stderr: ["freshet: LSN 99999 is past the end of the log of \(path) (last LSN 3)"]))
                #expect(runTool(["export", path, "--from", "99"]) == ToolRun(status: 2, stdout: [], stderr: ["freshet: LSN 99 is past the end of the log of \(path) (last LSN 3)"]))
                #expect(runTool(["dump", path, "--from", "10", "--to", "5"]) == ToolRun(status: 2, stdout: [], stderr: ["freshet: dump: --from 10 is after --to 5"]))
                #expect(runTool(["dump", path, "--from", "3"]).status == 0)
                try withRawEnvironment(directory) { env, dbs in
                    try env.write { txn in
                        let log = try #require(dbs["log"])
                        var bytes = try #require(try txn.get(log, key: lsnKey(2)))
                        bytes[bytes.count - 10] ^= 0x01
                        try txn.put(log, key: lsnKey(2), value: bytes)
                    }
                }
                let stats = runTool(["stats", path])
                #expect(stats.status == 1)
                #expect(stats.stdout[1].hasPrefix("records      3 (1 unreadable), "))
                #expect(stats.stderr == ["freshet: 1 unreadable record in \(path)"])
                let json = runTool(["stats", path, "--json"])
                #expect(json.status == 1)
                #expect(json.stderr == ["freshet: 1 unreadable record in \(path)"])
            }
        }

        @Test("why names the last local write, not where the rows last changed")
        func whyLastLocalWrite() async throws {
            let lines = [
                Self.localWrite(1, micros: Self.base, collection: #""favourites""#, id: #""1""#, json: #""{\"n\":1}""#),
                Self.localWrite(2, micros: Self.base + 1_000, collection: #""favourites""#, id: #""1""#, json: #""{\"n\":1}""#),
            ]
            try await withImported(lines) { directory in
                let why = runTool(["why", directory.path, "favourites"])
                #expect(why.stdout.first == "favourites: local-only: 1 row written locally (last local write at LSN 2), never fetched; fresh by definition")
            }
        }

        @Test("import says what is wrong with a path that is a file, a FILE that is a directory, an LSN out of range, an empty file")
        func importEdges() async throws {
            let one = Self.fetched(1, micros: Self.base, collection: #""a""#, rows: #"[{"id":"1","json":"1"}]"#)
            try await withFile(one) { file, store in
                let onFile = runTool(["import", file, file])
                #expect(onFile == ToolRun(status: 2, stdout: [], stderr: ["freshet: \(URL(fileURLWithPath: file).standardizedFileURL.path) is a file, not a directory; import builds a new store in a new or empty directory"]))
                let fromDirectory = runTool(["import", store.path, store.deletingLastPathComponent().path])
                #expect(fromDirectory == ToolRun(status: 2, stdout: [], stderr: ["freshet: cannot read \(store.deletingLastPathComponent().path): it is a directory, not a JSON Lines file"]))
            }
            let huge = one.replacingOccurrences(of: #""lsn":1,"#, with: #""lsn":18446744073709551615,"#)
            try await withFile(huge) { file, store in
                #expect(runTool(["import", store.path, file]).stderr == ["freshet: \(file): line 1: lsn 18446744073709551615 is out of range (at most 9223372036854775807)"])
            }
            for empty in ["", "\n", "  \n\n"] {
                try await withFile(empty) { file, store in
                    #expect(runTool(["import", store.path, file]) == ToolRun(status: 2, stdout: [], stderr: ["freshet: \(file): nothing to import: no record in the file; no store was created"]))
                    #expect(!FileManager.default.fileExists(atPath: store.path))
                }
            }
            try await withFile(one) { file, store in
                // LSN 0 names no record: refused as a usage error before the file is read.
                #expect(runTool(["import", store.path, file, "--through", "0"]) == ToolRun(status: 2, stdout: [], stderr: ["freshet: --through needs an LSN from 1 (LSN 0 is before the first record), got 0"]))
                #expect(!FileManager.default.fileExists(atPath: store.path))
            }
        }

        @Test("two imports racing into one directory (two processes): one builds the store, the other says the directory is not empty")
        func racingImports() async throws {
            try await offPool {
                let lines = (1...3).map { Self.fetched($0, micros: Self.base + Int64($0), collection: #""a""#, rows: #"[{"id":"1","json":"1"}]"#) }
                try await withFile(lines.joined(separator: "\n")) { file, store in
                    for round in 0..<5 {
                        let directory = store.appendingPathComponent("\(round)").path
                        let executable = try LiveStoreTests.executable().path
                        let processes = try (0..<2).map { _ in
                            try SpawnedProcess([executable, "import", directory, file], standardOutput: .discard, standardError: .pipe)
                        }
                        var outcomes: [String] = []
                        for process in processes {
                            let text = process.readErrorLines().map { $0 + "\n" }.joined()
                            let status = process.wait().status
                            // Which check the loser meets (before, at or after the directory lock) depends on timing; all are notEmpty.
                            let standardized = URL(fileURLWithPath: directory).standardizedFileURL.path
                            outcomes.append(status == 0 && text.isEmpty ? "ok" : text
                                .replacingOccurrences(of: "freshet: \(standardized) is not empty: another import wrote a store there meanwhile; nothing was written\n", with: "2 not empty")
                                .replacingOccurrences(of: "freshet: \(standardized) is not empty: another import is writing a store there; nothing was written\n", with: "2 not empty")
                                .replacingOccurrences(of: "freshet: \(standardized) is not empty; import builds a new store in a new or empty directory\n", with: "2 not empty")
                                + (status == 2 ? "" : " status \(status)"))
                        }
                        #expect(outcomes.sorted() == ["2 not empty", "ok"])
                        #expect(runTool(["verify", directory]).status == 0)
                    }
                }
            }
        }

        @Test("command-line edges: -x is an unknown option, extra arguments to help and --version, why --lsn 0", arguments: [
            (["dump", "d", "-x"], "dump: unknown option -x; try `freshet help dump`"),
            (["why", "d", "c", "-x"], "why: unknown option -x; try `freshet help why`"),
            (["import", "d", "f", "-x"], "import: unknown option -x; try `freshet help import`"),
            (["help", "dump", "extra"], #"help: unexpected argument "extra" (freshet help [COMMAND])"#),
            (["--version", "extra"], #"--version: unexpected argument "extra" (freshet --version)"#),
            (["why", "d", "c", "--lsn", "0"], "--lsn needs an LSN from 1 (LSN 0 is before the first record), got 0"),
        ])
        func usageErrors(arguments: [String], message: String) {
            #expect(runTool(arguments) == ToolRun(status: 2, stdout: [], stderr: ["freshet: " + message]))
        }
    }
}

/// Runs compare whole: status, standard output and standard error.
extension ToolRun: Equatable {
    static func == (a: ToolRun, b: ToolRun) -> Bool {
        (a.status, a.stdout, a.stderr) == (b.status, b.stdout, b.stderr)
    }
}
