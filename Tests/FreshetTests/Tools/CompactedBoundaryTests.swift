import Foundation
import Freshet
import FreshetCommands
import FreshetTesting
import ProcessSupport
import Synchronization
import Testing
import TestSupport

/// The tools on a compacted store answer as they did before the compaction within the window it
/// kept (trial findings 6, 7 and 11).
@Suite("compacted store: why, replay --at and concurrent compact", .scaledTimeLimit(minutes: 2))
struct CompactedBoundaryTests {
    /// `pokemon` fetched at start (LSN 1, `max-age=60`), `todos` fetched at start (LSN 2) and
    /// failing to connect 10 s later (LSN 3); closed. `body` gets the directory and the start.
    func withOfflineStore(_ body: (URL, Date) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let world = MutationWorld()
            let store = try Store(directory: directory, configuration: .test(), dependencies: world.dependencies)
            for name in ["pokemon", "todos"] {
                try await store.append(.fetched(.init(placement: .replace, rows: rows("1", "2"),
                                                      response: response("http://stub.invalid/\(name)", cacheControl: "max-age=60"))), to: name)
            }
            await world.clock.advance(by: .seconds(10))
            try await store.append(.fetchFailed(.init(url: "http://stub.invalid/todos", reason: "cannotConnect", message: "could not connect to the server")), to: "todos")
            store.close()
            try await body(directory, world.clock.start)
        }
    }

    /// Compacts the closed store with nothing kept, 100 s after the start (so the checkpoint
    /// record is stamped long after every event, and after `max-age`).
    func compactAll(_ directory: URL) async throws -> CheckpointInfo {
        let store = try await openForCompaction(directory, at: 100)
        defer { store.close() }
        return try #require(try store.compact(keeping: .zero).checkpoint)
    }

    @Test("why on a compacted store names the time and LSN of the failure the checkpoint covers (text and --json summary)")
    func whyOfflineSinceAfterCompaction() async throws {
        try await withOfflineStore { directory, start in
            let failedAt = LogRecord.iso8601(start.addingTimeInterval(10))
            // Judged at a fixed time after every record (the compaction's too), so the rows'
            // freshness that ends the line does not depend on the wall clock.
            let at = ["--at", LogRecord.iso8601(start.addingTimeInterval(200))]
            let verdict = "todos: offline since \(failedAt) (LSN 3): 1 failed attempt, last cannotConnect: could not connect to the server; serving rows last synced at \(LogRecord.iso8601(start)) while offline; stale for 2.3 min (max-age=60, age 3.3 min)"
            #expect(runTool(["why", directory.path, "todos"] + at).stdout.first == verdict)
            let checkpoint = try await compactAll(directory)
            #expect(checkpoint.lsn == 4)
            #expect(checkpoint.throughLSN == 3)
            let run = runTool(["why", directory.path, "todos"] + at)
            #expect(run.status == 0)
            #expect(run.stdout.first == verdict)
            // The library's why, asked for no time, judges at the last event: the failure, not the compaction.
            let reopened = try Store(directory: directory, configuration: .test(), dependencies: .test(), create: false)
            let judged = Result { () throws(ToolError) in try reopened.why("todos").time }
            reopened.close()
            #expect(try judged.get() == start.addingTimeInterval(10))
            let json = runTool(["why", directory.path, "todos", "--json"] + at)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.joined().utf8)) as? [String: Any])
            #expect(object["summary"] as? String == String(verdict.dropFirst("todos: ".count)))
        }
    }

    @Test("replay after compact --keep 0 equals replay before (statuses included), text and --json")
    func replayUnchangedByCompaction() async throws {
        try await withOfflineStore { directory, start in
            let text = runTool(["replay", directory.path])
            let json = runTool(["replay", directory.path, "--json"])
            #expect(text.status == 0)
            // Judged 10 s after the fetch: max-age=60 keeps pokemon fresh.
            #expect(text.stdout.contains { $0.hasPrefix("pokemon  2 rows  fresh") })
            _ = try await compactAll(directory)
            let textAfter = runTool(["replay", directory.path])
            let jsonAfter = runTool(["replay", directory.path, "--json"])
            #expect(textAfter.status == 0)
            // The header names the checkpoint (LSN 4) and its record count; the rest is equal.
            #expect(Array(textAfter.stdout.dropFirst()) == Array(text.stdout.dropFirst()))
            #expect(Array(jsonAfter.stdout.dropFirst()) == Array(json.stdout.dropFirst()))
            let header = try #require(try JSONSerialization.jsonObject(with: Data(jsonAfter.stdout[0].utf8)) as? [String: Any])
            #expect(header["time"] as? String == LogRecord.iso8601(start.addingTimeInterval(10)))
        }
    }

    @Test("--at the checkpoint's through-time is the state through the checkpoint, like --to throughLSN; a millisecond earlier is refused")
    func atThroughTime() async throws {
        try await withOfflineStore { directory, start in
            let checkpoint = try await compactAll(directory)
            let through = LogRecord.iso8601(checkpoint.throughTime)
            #expect(through == LogRecord.iso8601(start.addingTimeInterval(10)))
            let at = runTool(["replay", directory.path, "--at", through])
            let to = runTool(["replay", directory.path, "--to", "3"])
            #expect(at.status == 0)
            #expect(to.status == 0)
            #expect(at.stdout == to.stdout)
            #expect(at.stdout.first == "replay of \(directory.path) through LSN 3 (\(through)), 0 records after the \(checkpoint)")
            let why = runTool(["why", directory.path, "todos", "--at", through])
            #expect(why.status == 0)
            let earlier = LogRecord.iso8601(checkpoint.throughTime.addingTimeInterval(-0.001))
            let refused = runTool(["replay", directory.path, "--at", earlier])
            #expect(refused.status == 2)
            #expect(refused.stderr == ["freshet: \(earlier) is before the \(checkpoint) of \(directory.path): compaction removed the history before it"])
        }
    }

    @Test("a compact overtaken by another process's compaction exits 0, says so on standard error, and the store verifies")
    func overtakenCompactExitsZero() async throws {
        try await offPool {
            let freshet = try await StoreHelper.executable(named: "freshet")
            try await withTemporaryDirectory { parent in
                let directory = parent.appendingPathComponent("store")
                // More records than one progress step (65,536), so the tool reports progress and the
                // other compaction runs from the first progress line, while this one still folds.
                let count = 70_000
                let lines = (1...count).lazy.map { i in
                    #"{"lsn":\#(i),"micros":\#(1_796_074_206_300_000 + i),"kind":"localWrite","collection":"notes","event":{"ops":[{"op":"upsert","row":{"id":"n\#(i % 50)","json":"{}"}}]}}"#
                }
                #expect(try Store.importLog(lines: lines, into: directory).records == count)
                let stdout = Mutex<[String]>([])
                let stderr = Mutex<[String]>([])
                let other = Mutex<(SpawnedProcess.Termination, [String])?>(nil)
                let tool = Tool(standardOutput: { line in stdout.withLock { $0.append(line) } }, standardError: { line in
                    stderr.withLock { $0.append(line) }
                    guard other.withLock({ $0 == nil }) else { return }
                    let result: (SpawnedProcess.Termination, [String])
                    do {
                        let run = try SpawnedProcess.runBlocking([freshet.path, "compact", directory.path, "--keep", "0"], standardError: .discard)
                        result = (run.termination, run.lines)
                    } catch {
                        result = (.exited(-1), ["\(error)"])
                    }
                    other.withLock { $0 = result }
                })
                let status = tool.run(["compact", directory.path, "--keep", "0"])
                let (otherEnd, otherLines) = try #require(other.withLock { $0 })
                #expect(otherEnd == .exited(0))
                #expect(otherLines.first?.hasPrefix("compacted \(directory.path): checkpoint at LSN \(count + 1) (state through LSN \(count) at ") == true)
                #expect(status == 0)
                #expect(stdout.withLock { $0 } == [])
                let errors = stderr.withLock { $0 }
                #expect(errors.first == "freshet: compact: folding 65536 of \(count) records")
                #expect(errors.last == "freshet: another compaction of \(directory.path) finished while this one ran (checkpoint at LSN \(count + 1)); this one removed nothing")
                #expect(runTool(["verify", directory.path]).status == 0)
            }
        }
    }
}
