import Foundation
import Freshet
import FreshetCommands
import FreshetTesting
import Testing

/// Builds a closed store of `count` `localWrite` records (each a row of about `size` bytes of
/// JSON, IDs cycling over 20, so later records overwrite earlier rows) and runs `body` with it.
func withWrittenStore<R>(records count: Int, rowBytes size: Int = 40, _ body: (URL) async throws -> R) async throws -> R {
    try await withTemporaryDirectory { directory in
        var configuration = Configuration.test()
        configuration.mapSize = 1 << 26
        let store = try Store(directory: directory, configuration: configuration, dependencies: .test())
        let filler = String(repeating: "x", count: size)
        for i in 0..<count {
            try await store.localWrite("notes", [.upsert(Row(id: "n\(i % 20)", json: Data(#"{"i":\#(i),"text":"\#(filler)"}"#.utf8)))])
        }
        store.close()
        return try await body(directory)
    }
}

/// Opens a store read-only, as the tools do.
func openReadOnly(_ directory: URL) throws -> Store {
    var configuration = Configuration(durability: .relaxed)
    configuration.sendsMutations = false
    return try Store(directory: directory, configuration: configuration, create: false)
}

/// A copy of a closed store's files in a new directory.
func copyStore(_ directory: URL) throws -> URL {
    let copy = FileManager.default.temporaryDirectory.appendingPathComponent("freshet-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: false)
    for name in ["data.mdb", "lock.mdb"] {
        try FileManager.default.copyItem(at: directory.appendingPathComponent(name), to: copy.appendingPathComponent(name))
    }
    return copy
}

func fileSize(_ url: URL) throws -> Int {
    try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int)
}

extension LogToolTests {
    @Suite("Compaction in processes")
    struct CompactionProcessTests {
        @Test("a child process SIGKILLed at any point of a compaction leaves a store that verifies, with the old log or the new")
        func killDuringCompaction() async throws {
            try await withWrittenStore(records: 200) { original in
                let expected = try {
                    let store = try openReadOnly(original)
                    defer { store.close() }
                    return try store.replay().snapshots
                }()
                // Progress calls every 10 records: 20 while folding, 1 at its end, 20 while
                // removing (inside the write transaction), 1 at its end, 1 just before the commit.
                for killAt in [1, 2, 10, 20, 21, 22, 25, 30, 40, 41, 42, 43, 1_000] {
                    let copy = try copyStore(original)
                    defer { try? FileManager.default.removeItem(at: copy) }
                    let helper = try await StoreHelper(["compact", copy.path, String(killAt)])
                    let status: Int32
                    var printed: String?
                    if killAt == 1_000 {
                        printed = try await helper.nextLine()
                        status = await helper.waitForExit()
                        #expect(status == 0)
                    } else {
                        status = await helper.waitForExit()
                        #expect(status == SIGKILL, "kill point \(killAt)")
                    }
                    _ = await helper.kill()
                    let store = try openReadOnly(copy)
                    defer { store.close() }
                    let report = try store.verify()
                    #expect(report.problems == [], "kill point \(killAt)")
                    let lsns = try logLSNs(store)
                    if killAt == 1_000 {
                        #expect(printed == "compacted 201")
                        #expect(lsns == [201])
                    } else {
                        #expect(lsns == Array(1...200), "kill point \(killAt): the old log, whole")
                    }
                    #expect(try store.replay().snapshots == expected, "kill point \(killAt)")
                }
            }
        }

        @Test("vacuum shrinks the file after compaction and is refused while another process has the store open")
        func vacuum() async throws {
            try await withWrittenStore(records: 1_500, rowBytes: 1_000) { directory in
                do {
                    let store = try await openForCompaction(directory, at: 0)
                    defer { store.close() }
                    let report = try store.compact(keeping: .zero)
                    #expect(report.removedRecords == 1_500)
                    #expect(store.lastLSN == 1_501)
                    #expect { try Store.vacuum(directory: directory) } throws: { ($0 as? StoreError)?.code == .alreadyOpen }
                }
                let before = try fileSize(directory.appendingPathComponent("data.mdb"))
                let reader = try await StoreHelper(["read", directory.path])
                #expect(try await reader.nextLine() == "reading")
                #expect { try Store.vacuum(directory: directory) } throws: { error in
                    guard let error = error as? StoreError else { return false }
                    return error.code == .locked && error.message.contains("open in another process")
                }
                #expect(try fileSize(directory.appendingPathComponent("data.mdb")) == before)
                await reader.kill()
                let run = runTool(["compact", directory.path, "--keep", "0", "--vacuum"])
                #expect(run.status == 0)
                #expect(run.stderr == [])
                #expect(run.stdout.first == "nothing to compact in \(directory.path): every record since the last checkpoint is inside the window")
                #expect(run.stdout.count == 2)
                let after = try fileSize(directory.appendingPathComponent("data.mdb"))
                #expect(run.stdout.last == "vacuumed \(directory.path): data.mdb \(before) → \(after) bytes")
                #expect(after * 4 < before)
                let store = try openReadOnly(directory)
                defer { store.close() }
                #expect(try store.verify().problems == [])
                #expect(try store.snapshot("notes").rows.count == 20)
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["data.mdb", "lock.mdb"])
            }
        }

        @Test("freshet compact reports the checkpoint; bad arguments and a missing store exit 2")
        func compactCommand() async throws {
            try await withWrittenStore(records: 30) { directory in
                let run = runTool(["compact", directory.path, "--keep", "0"])
                #expect(run.status == 0)
                #expect(run.stderr == [])
                // The tool runs on the wall clock: the checkpoint's own time is today's.
                #expect(run.stdout.count == 1)
                #expect(run.stdout.first?.hasPrefix("compacted \(directory.path): checkpoint at LSN 31 (state through LSN 30 at 2000-01-01T00:00:00.000Z) at ") == true)
                #expect(run.stdout.first?.hasSuffix("; removed 30 records, kept 0 proposals of pending mutations; no record is inside the window") == true)
                let replay = runTool(["replay", directory.path, "--to", "29"])
                #expect(replay.status == 2)
                #expect(replay.stderr.first?.contains("LSN 29 is before the checkpoint at LSN 31") == true)
                #expect(runTool(["verify", directory.path]).status == 0)
                let dump = runTool(["dump", directory.path, "--from", "1", "--to", "3"])
                #expect(dump.status == 2)
                #expect(dump.stdout == [])
                #expect(dump.stderr == ["freshet: LSNs 1 ... 3 of \(directory.path) are before the checkpoint at LSN 31 (state through LSN 30 at 2000-01-01T00:00:00.000Z): compaction removed them"])
                #expect(runTool(["dump", directory.path, "--from", "31"]).stdout.count == 1)
                #expect(runTool(["compact", directory.path, "--keep", "7 days"]).status == 2)
                #expect(runTool(["compact", directory.path, "--keep", "7 days"]).stderr == [#"freshet: --keep needs a duration such as 7d, 12h, 90m, 30s or 0, got "7 days""#])
                let missing = runTool(["compact", directory.path + "-missing"])
                #expect(missing.status == 2)
                #expect(!FileManager.default.fileExists(atPath: directory.path + "-missing"))
                #expect(runTool(["help", "compact"]).stdout.first?.hasPrefix("usage: freshet compact DIR [--keep DURATION] [--vacuum]") == true)
                var options = Command.CompactOptions(directory: "d")
                options.keep = .seconds(129_600)
                options.vacuum = true
                let parsed = try Command.parse(["compact", "d", "--keep", "36h", "--vacuum"])
                #expect(parsed == .compact(options))
            }
        }
    }
}
