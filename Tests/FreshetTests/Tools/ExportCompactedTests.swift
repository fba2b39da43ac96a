import Foundation
import Freshet
import FreshetCommands
import FreshetTesting
import Testing

extension LogToolTests.ExportImportTests {
    /// Writes `lines` as a JSON Lines file next to `directory` and imports it there.
    func importLines(_ lines: [String], into directory: URL) throws -> ToolRun {
        let file = directory.appendingPathExtension("jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: file)
        return runTool(["import", directory.path, file.path])
    }

    @Test("a compacted store exports its checkpoint's state and imports byte for byte: same LSNs, databases, replay; meta.checkpoint set", arguments: [
        (0, [10, 11], 10 as UInt64),
        (101, [8, 9, 10, 11], 7 as UInt64),
    ])
    func compactedRoundTrip(keepSeconds: Int, lsns: [UInt64], throughLSN: UInt64) async throws {
        try await withRecordedRun { directory, _ in
            do {
                let store = try await openForCompaction(directory, at: 230)
                defer { store.close() }
                #expect(try store.compact(keeping: .seconds(keepSeconds)).checkpoint?.throughLSN == LSN(throughLSN))
                #expect(try logLSNs(store) == lsns)
            }
            let export = runTool(["export", directory.path])
            #expect(export.status == 0)
            #expect(export.stderr == [])
            #expect(export.stdout.count == lsns.count)
            let checkpointLine = try #require(export.stdout.last)
            #expect(checkpointLine.hasPrefix(#"{"lsn":11,"#))
            #expect(checkpointLine.contains(#""kind":"checkpoint","collection":"","event":{"throughLSN":\#(throughLSN),"#))
            #expect(checkpointLine.contains(#"{"database":"rows","key":"#))
            #expect(checkpointLine.contains(#"{"database":"marks","key":"todos","value"#))
            try await withTemporaryDirectory { copy in
                let run = try importLines(export.stdout, into: copy)
                #expect(run.stderr == [])
                #expect(run.stdout == ["imported \(lsns.count) records through LSN 11 into \(copy.path)"])
                let imported = try contents(of: copy)
                #expect(imported == (try contents(of: directory)))
                #expect(imported["meta"]?[Array("checkpoint".utf8)] == [0, 0, 0, 0, 0, 0, 0, 11])
                #expect(imported["log"]?.keys.map { $0.reduce(0) { $0 << 8 | UInt64($1) } }.sorted() == lsns)
                let verify = runTool(["verify", copy.path])
                #expect(verify.status == 0)
                #expect(verify.stderr == [])
                let replay = runTool(["replay", copy.path, "--json"])
                #expect(replay.status == 0)
                #expect(replay.stdout == runTool(["replay", directory.path, "--json"]).stdout)
                #expect(runTool(["export", copy.path]).stdout == export.stdout)
            }
        }
    }

    @Test("a redacted export of a compacted store hides the field in the checkpoint's rows too, and imports into a store that verifies")
    func compactedRedaction() async throws {
        try await withTemporaryDirectory { directory in
            do {
                let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
                defer { store.close() }
                let person = Row(id: "7", json: Data(#"{"contact":{"email":"ada@example.com"},"email":"ada@example.com","name":"Ada"}"#.utf8))
                try await store.localWrite("people", [.upsert(person)])
                #expect(try store.compact(keeping: .zero).checkpoint?.throughLSN == LSN(1))
                #expect(try logLSNs(store) == [2])
            }
            #expect(runTool(["export", directory.path]).stdout.joined().contains("ada@example.com"))
            let export = runTool(["export", directory.path, "--redact", "email"])
            #expect(export.status == 0)
            #expect(export.stdout.count == 1)
            let text = export.stdout.joined(separator: "\n")
            #expect(!text.contains("ada@example.com"))
            // rows value: ID length 1 (varint), ID "7", then the redacted JSON.
            #expect(text.contains(#""value":"\u00017{\"contact\":{\"email\":\"[redacted]\"},\"email\":\"[redacted]\",\"name\":\"Ada\"}"}"#))
            try await withTemporaryDirectory { copy in
                let run = try importLines(export.stdout, into: copy)
                #expect(run.stderr == [])
                #expect(run.stdout == ["imported 1 record through LSN 2 into \(copy.path)"])
                #expect(runTool(["verify", copy.path]).status == 0)
                let store = try Store(directory: copy, configuration: .test(), dependencies: .test())
                defer { store.close() }
                let rows = try store.snapshot("people").rows
                #expect(rows.map(\.id) == ["7"])
                #expect(rows.map { String(decoding: $0.json, as: UTF8.self) } == [#"{"contact":{"email":"[redacted]"},"email":"[redacted]","name":"Ada"}"#])
            }
        }
    }

    @Test("importing a compacted export through an LSN between the checkpoint's throughLSN and the checkpoint is refused, naming both")
    func compactedImportThroughRefused() async throws {
        try await withRecordedRun { directory, _ in
            do {
                let store = try await openForCompaction(directory, at: 230)
                defer { store.close() }
                try store.compact(keeping: .seconds(101))
            }
            let export = runTool(["export", directory.path])
            try await withTemporaryDirectory { copy in
                #expect {
                    try Store.importLog(lines: export.stdout, into: copy, through: LSN(9))
                } throws: { error in
                    let e = error as? ToolError
                    return e?.code == .beforeCheckpoint
                        && e?.message == "line 4: LSN 9 is before the checkpoint at LSN 11, whose state the records after LSN 7 build on; import through LSN 11 or later, or through LSN 7 or earlier"
                }
                // Every line is checked before anything is written: no store was created.
                #expect(!FileManager.default.fileExists(atPath: copy.path))
            }
        }
    }
}
