import Foundation
import Freshet
import FreshetCommands
@testable import FreshetLMDB
import Testing

/// The log tools' gap and exit-code findings (issue 8): LSNs missing from a log, LSNs past
/// the end, the path messages name a store by, and a policy an eviction leaves behind.
extension LogToolTests.NewUserTrialTests {
    /// Five `fetched` records of collection `a`, LSNs 1 … 5, one second apart.
    static let fiveRecords = (1...5).map { fetched($0, micros: base + Int64($0) * 1_000_000, collection: #""a""#, rows: #"[{"id":"\#($0)","json":"\#($0)"}]"#) }

    /// Imports `lines`, deletes the log records at `missing` through LMDB (a damaged or
    /// hand-edited store), and runs `body` with the directory.
    func withGaps<R>(_ lines: [String], missing: [UInt64], _ body: (URL) async throws -> R) async throws -> R {
        try await withImported(lines) { directory in
            try withRawEnvironment(directory) { env, dbs in
                try env.write { txn in
                    let log = try #require(dbs["log"])
                    for lsn in missing { try txn.delete(log, key: lsnKey(lsn)) }
                }
            }
            return try await body(directory)
        }
    }

    @Test("import refuses a log with a gap in the middle: exit 2, one line naming the missing LSNs and the line, no store created")
    func importRefusesGap() async throws {
        let cases: [(lines: [String], message: String)] = [
            ([Self.fiveRecords[0], Self.fiveRecords[1], Self.fiveRecords[2], Self.fiveRecords[4]],
             "line 4: LSN 4 is missing: the log jumps from 3 to 5, and no checkpoint in the file accounts for it; no store was created"),
            // A blank line is skipped, so the line named is the record's own.
            ([Self.fiveRecords[0], "", Self.fiveRecords[3]],
             "line 3: LSNs 2…3 are missing: the log jumps from 1 to 4, and no checkpoint in the file accounts for it; no store was created"),
        ]
        for (lines, message) in cases {
            try await withFile(lines.joined(separator: "\n")) { file, store in
                #expect(runTool(["import", store.path, file]) == ToolRun(status: 2, stdout: [], stderr: ["freshet: \(file): \(message)"]))
                #expect(!FileManager.default.fileExists(atPath: store.path))
                // Also with --through before the gap: every line is checked.
                #expect(runTool(["import", store.path, file, "--through", "1"]).status == 2)
                #expect(throws: ToolError(.missingRecords, message)) { try Store.importLog(lines: lines, into: store) }
                #expect(!FileManager.default.fileExists(atPath: store.path))
            }
        }
        // A tail of a log (what `export --from 3` writes) starts where it starts.
        try await withFile(Self.fiveRecords[2...].joined(separator: "\n")) { file, store in
            #expect(runTool(["import", store.path, file]) == ToolRun(status: 0, stdout: ["imported 3 records through LSN 5 into \(store.path)"], stderr: []))
        }
    }

    @Test("import --through an LSN past the end of the file exits 2 as the other tools do, and creates nothing")
    func importThroughPastEnd() async throws {
        try await withFile(Self.fiveRecords.prefix(3).joined(separator: "\n")) { file, store in
            #expect(runTool(["import", store.path, file, "--through", "99"])
                    == ToolRun(status: 2, stdout: [], stderr: ["freshet: \(file): LSN 99 is past the end of the log (last LSN 3, line 3); no store was created"]))
            #expect(!FileManager.default.fileExists(atPath: store.path))
            #expect(throws: ToolError(.pastEnd, "LSN 4 is past the end of the log (last LSN 3, line 3); no store was created")) {
                try Store.importLog(lines: Self.fiveRecords.prefix(3), into: store, through: LSN(4))
            }
            #expect(runTool(["import", store.path, file, "--through", "3"]).status == 0)
        }
    }

    @Test("replay --to and why --lsn of a missing LSN fold through the LSN before it, name the missing LSN on stderr and exit 1")
    func replayAndWhyToMissingLSN() async throws {
        try await withGaps(Self.fiveRecords, missing: [4]) { directory in
            let path = directory.path
            let skipped = "freshet: skipped: log · LSN 4: LSN 4 is missing: the log jumps from 3 to 5"
            let replay = runTool(["replay", path, "--to", "4"])
            #expect(replay.status == 1)
            #expect(replay.stdout.first == "replay of \(path) through LSN 3 (2026-12-01T03:21:01.000Z), 3 records")
            #expect(replay.stderr == [skipped])
            let json = runTool(["replay", path, "--to", "4", "--json"])
            #expect(json.status == 1)
            #expect(json.stderr == [skipped])
            let why = runTool(["why", path, "a", "--lsn", "4"])
            #expect(why.status == 1)
            #expect(why.stdout.first == "a: stale by age: stale for 0 s (no max-age, Expires or Last-Modified, age 0 s); last validated by a 200 at 2026-12-01T03:21:01.000Z (LSN 3)")
            #expect(why.stderr == [skipped])
            #expect(runTool(["why", path, "a", "--lsn", "4", "--json"]).stderr == [skipped])
            // The LSN after the gap, and the whole log, report the gap too; before it, nothing is missing.
            #expect(runTool(["replay", path, "--to", "5"]).stderr == [skipped])
            #expect(runTool(["replay", path]).stderr == [skipped])
            // --at stops before LSN 5: the missing record may be stamped before the time asked for.
            let at = runTool(["replay", path, "--at", "2026-12-01T03:21:01.000Z"])
            #expect(at.status == 1)
            #expect(at.stdout.first == "replay of \(path) through LSN 3 (2026-12-01T03:21:01.000Z), 3 records")
            #expect(at.stderr == [skipped])
            let before = runTool(["replay", path, "--to", "3"])
            #expect(before.status == 0)
            #expect(before.stderr == [])
            #expect(runTool(["why", path, "a", "--lsn", "3"]).status == 0)
            // Past the end is a usage error, as documented.
            #expect(runTool(["replay", path, "--to", "6"]) == ToolRun(status: 2, stdout: [], stderr: ["freshet: LSN 6 is past the end of the log of \(path) (last LSN 5)"]))
            #expect(runTool(["why", path, "a", "--lsn", "6"]) == ToolRun(status: 2, stdout: [], stderr: ["freshet: LSN 6 is past the end of the log of \(path) (last LSN 5)"]))
        }
    }

    @Test("replay --to of an LSN inside a longer gap names the whole gap")
    func replayInsideLongGap() async throws {
        try await withGaps(Self.fiveRecords, missing: [2, 3, 4]) { directory in
            let replay = runTool(["replay", directory.path, "--to", "2"])
            #expect(replay.status == 1)
            #expect(replay.stdout.first == "replay of \(directory.path) through LSN 1 (2026-12-01T03:20:59.000Z), 1 record")
            #expect(replay.stderr == ["freshet: skipped: log · LSN 2: LSNs 2…4 are missing: the log jumps from 1 to 5"])
        }
    }

    @Test("dump, stats and export of a log with a gap keep their output, name the missing LSNs on stderr and exit 1; dump --from/--to report the gaps in the range")
    func dumpAndStatsReportGaps() async throws {
        try await withGaps(Self.fiveRecords, missing: [2, 4]) { directory in
            let path = directory.path
            let gap2 = "freshet: \(path): log · LSN 2: LSN 2 is missing: the log jumps from 1 to 3"
            let gap4 = "freshet: \(path): log · LSN 4: LSN 4 is missing: the log jumps from 3 to 5"
            let dump = runTool(["dump", path])
            #expect(dump.status == 1)
            #expect(dump.stdout.map { $0.prefix(6).trimmingCharacters(in: .whitespaces) } == ["1", "3", "5"])
            #expect(dump.stderr == [gap2, gap4])
            let json = runTool(["dump", path, "--json"])
            #expect(json.status == 1)
            #expect(json.stdout.count == 3)
            #expect(json.stderr == [gap2, gap4])
            // A range holding a missing LSN at its start, at its end, or none.
            let fromMissing = runTool(["dump", path, "--from", "4"])
            #expect(fromMissing.status == 1)
            #expect(fromMissing.stdout.count == 1)
            #expect(fromMissing.stderr == [gap4])
            let toMissing = runTool(["dump", path, "--to", "4"])
            #expect(toMissing.status == 1)
            #expect(toMissing.stdout.count == 2)
            #expect(toMissing.stderr == [gap2, gap4])
            #expect(runTool(["dump", path, "--from", "3", "--to", "3"]).status == 0)
            #expect(runTool(["dump", path, "--from", "5"]) == ToolRun(status: 0, stdout: [dump.stdout[2]], stderr: []))
            #expect(runTool(["dump", path, "--to", "99"]) == ToolRun(status: 2, stdout: [], stderr: ["freshet: LSN 99 is past the end of the log of \(path) (last LSN 5)"]))

            let export = runTool(["export", path])
            #expect(export.status == 1)
            #expect(export.stdout.count == 3)
            #expect(export.stderr == [gap2, gap4])
            #expect(runTool(["export", path, "--from", "4"]).stderr == [gap4])
            #expect(runTool(["export", path, "--from", "5"]).status == 0)

            let stats = runTool(["stats", path])
            #expect(stats.status == 1)
            #expect(stats.stdout[1].hasPrefix("records      3 (0 unreadable), "))
            #expect(stats.stderr == [gap2, gap4])
            let statsJSON = runTool(["stats", path, "--json"])
            #expect(statsJSON.status == 1)
            #expect(statsJSON.stderr == [gap2, gap4])
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test(), create: false)
            defer { store.close() }
            #expect(try store.statistics().missingRecords.map(\.lsn) == [LSN(2), LSN(4)])
        }
    }

    @Test("a compacted log's gaps before the checkpoint are not problems: dump, stats, replay, verify exit 0, and its export imports")
    func compactedGapsAreLegitimate() async throws {
        try await withRecordedRun { directory, _ in
            do {
                // LSN 10 is a pending edit; two local writes after it, then everything is compacted.
                let store = try await openForCompaction(directory, at: 230)
                defer { store.close() }
                try await store.localWrite("favourites", [.upsert(row("2", "two"))])
                try await store.localWrite("favourites", [.upsert(row("3", "three"))])
                #expect(try store.compact(keeping: .zero).checkpoint?.throughLSN == LSN(12))
                #expect(try logLSNs(store) == [10, 13])
            }
            let path = directory.path
            for command in [["dump"], ["dump", "--from", "11"], ["dump", "--to", "12"], ["stats"], ["replay"], ["verify"], ["why", "todos"]] {
                let run = runTool([command[0], path] + command.dropFirst())
                #expect(run.status == 0, "\(command)")
                #expect(run.stderr == [], "\(command)")
            }
            let export = runTool(["export", path])
            #expect(export.status == 0)
            try await withFile(export.stdout.joined(separator: "\n")) { file, copy in
                #expect(runTool(["import", copy.path, file]) == ToolRun(status: 0, stdout: ["imported 2 records through LSN 13 into \(copy.path)"], stderr: []))
                #expect(runTool(["verify", copy.path]).status == 0)
            }
        }
    }

    @Test("every tool names the store by the path as typed, not by its absolute, standardized form")
    func pathAsTyped() async throws {
        try await withImported(Array(Self.fiveRecords.prefix(3))) { directory in
            let typed = directory.deletingLastPathComponent().path + "/../" + directory.deletingLastPathComponent().lastPathComponent + "/" + directory.lastPathComponent
            #expect(URL(fileURLWithPath: typed).standardizedFileURL.path == directory.path)
            let pastEnd = "LSN 9 is past the end of the log of \(typed) (last LSN 3)"
            #expect(runTool(["replay", typed, "--to", "9"]).stderr == ["freshet: " + pastEnd])
            #expect(runTool(["why", typed, "a", "--lsn", "9"]).stderr == ["freshet: " + pastEnd])
            #expect(runTool(["dump", typed, "--to", "9"]).stderr == ["freshet: " + pastEnd])
            // A trailing / (shell completion adds one) is dropped alike by every message.
            #expect(runTool(["dump", typed + "/", "--to", "9"]).stderr == ["freshet: " + pastEnd])
            #expect(runTool(["replay", typed + "/", "--to", "9"]).stderr == ["freshet: " + pastEnd])
            #expect(runTool(["why", typed, "a", "--at", "2020-01-01T00:00:00Z"]).stderr == ["freshet: 2020-01-01T00:00:00.000Z is before the first record of \(typed)"])
            let missing = typed + "-none"
            #expect(runTool(["verify", missing]) == ToolRun(status: 2, stdout: [], stderr: ["freshet: cannot open store \(missing): \(missing) does not exist"]))
            try await withFile(Self.fiveRecords[0]) { file, _ in
                #expect(runTool(["import", typed, file]) == ToolRun(status: 2, stdout: [], stderr: ["freshet: \(typed) is not empty; import builds a new store in a new or empty directory"]))
            }
        }
    }

    @Test("an eviction drops the collection's read policy: after compaction the checkpoint keeps none and why says never fetched under the store's default")
    func evictionDropsPolicy() async throws {
        let policy = #""readPolicy":{"freshness":"maxAge","maxAgeMicros":300000000,"maxAttempts":3,"baseDelayMicros":1000000,"maxDelayMicros":30000000,"jitterMillionths":0,"maxRetryAfterMicros":60000000}"#
        let lines = [
            #"{"lsn":1,"micros":\#(Self.base),"kind":"fetched","collection":"items","event":{"placement":"replace","rows":[{"id":"1","json":"1"}],"response":{"url":"http://h/items","status":200,"durationMicros":0,"responseBytes":0,"requestBytes":0},\#(policy)}}"#,
            #"{"lsn":2,"micros":\#(Self.base + 300_000_000),"kind":"evicted","collection":"items","event":{"unobservedMicros":300000000,"gcTimeMicros":300000000}}"#,
        ]
        try await withImported(lines) { directory in
            let path = directory.path
            // Before compaction the eviction is in the log: why says so, under no recorded policy.
            let evicted = runTool(["why", path, "items", "--lsn", "2"])
            #expect(evicted.stdout.prefix(2) == [
                "items: evicted at 2026-12-01T03:25:58.000Z (LSN 2) after 300 s unobserved (gcTime 300 s): no rows or SyncMark are stored (the log keeps their history until compaction); the next observe refetches",
                "  judged at 2026-12-01T03:25:58.000Z under policy http (the store's default: the log records no policy for this collection); status empty",
            ])
            #expect(runTool(["why", path, "items", "--lsn", "1"]).stdout.dropFirst().first
                    == "  judged at 2026-12-01T03:20:58.000Z under policy maxAge=300 (recorded at LSN 1; retries: 3 attempts, base delay 1 s, at most 30 s); status fresh")
            #expect(runTool(["compact", path, "--keep", "0"]).status == 0)
            let export = runTool(["export", path])
            #expect(export.stdout.count == 1)
            #expect(export.stdout[0].contains(#""policies":[]"#))
            let why = runTool(["why", path, "items", "--json"])
            #expect(why.status == 0)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(why.stdout.joined().utf8)) as? [String: Any])
            #expect(object["verdict"] as? String == "neverFetched")
            #expect(object["summary"] as? String == "never fetched: no event of this collection is in the log")
            #expect(object["policy"] as? String == "http")
            #expect(object["policySource"] as? [String: String] == ["from": "storeDefault"])
            #expect(runTool(["why", path, "items"]).stdout.first == "items: never fetched: no event of this collection is in the log")
        }
    }
}

extension LogToolTests.NewUserTrialTests {
    @Test("the last record lost (meta.lastLSN still counts it): dump, export, stats, replay and why name it and exit 1; compact refuses and removes nothing")
    func lostLastRecord() async throws {
        try await withGaps(Self.fiveRecords, missing: [5]) { directory in
            let path = directory.path
            let tail = "log · LSN 5: LSN 5 is missing: the log ends at 4, the store assigned LSNs up to 5"
            let dump = runTool(["dump", path])
            #expect(dump.status == 1)
            #expect(dump.stdout.count == 4)
            #expect(dump.stderr == ["freshet: \(path): \(tail)"])
            #expect(runTool(["dump", path, "--to", "5"]).stderr == ["freshet: \(path): \(tail)"])
            #expect(runTool(["dump", path, "--to", "4"]) == ToolRun(status: 0, stdout: dump.stdout, stderr: []))
            let export = runTool(["export", path])
            #expect(export.status == 1)
            #expect(export.stdout.count == 4)
            #expect(export.stderr == ["freshet: \(path): \(tail)"])
            #expect(runTool(["export", path, "--from", "5"]) == ToolRun(status: 1, stdout: [], stderr: ["freshet: \(path): \(tail)"]))
            let stats = runTool(["stats", path])
            #expect(stats.status == 1)
            #expect(stats.stderr == ["freshet: \(path): \(tail)"])
            let replay = runTool(["replay", path])
            #expect(replay.status == 1)
            #expect(replay.stderr == ["freshet: skipped: \(tail)"])
            // `--to 5` is the missing record, not past the end.
            #expect(runTool(["replay", path, "--to", "5"]).stderr == ["freshet: skipped: \(tail)"])
            let why = runTool(["why", path, "a"])
            #expect(why.status == 1)
            #expect(why.stderr == ["freshet: skipped: \(tail)"])
            let compact = runTool(["compact", path, "--keep", "0s"])
            #expect(compact.status == 1)
            #expect(compact.stderr == ["freshet: nothing was removed: 1 problem in the records to be covered, first: \(tail); run `freshet verify`"])
            #expect(runTool(["dump", path]).stdout == dump.stdout)
        }
    }
}
