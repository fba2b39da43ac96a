import Foundation
import Freshet
import FreshetCommands
import Testing

extension LogToolTests {
    @Suite("freshet replay")
    struct ReplayTests {
        @Test("replay at each step's LSN equals every snapshot the store showed at that step")
        func replayMatchesObservedSnapshots() async throws {
            try await withRecordedRun { directory, checkpoints in
                #expect(checkpoints.map(\.lsn) == [1, 2, 3, 5, 7, 8, 9, 10])
                var configuration = Configuration(durability: .relaxed)
                configuration.sendsMutations = false
                let store = try Store(directory: directory, configuration: configuration, create: false)
                defer { store.close() }
                for checkpoint in checkpoints {
                    let replay = try store.replay(to: .lsn(checkpoint.lsn), policy: recordedRunPolicy)
                    #expect(replay.lsn == checkpoint.lsn, "\(checkpoint.step)")
                    #expect(replay.snapshots == checkpoint.snapshots, "\(checkpoint.step)")
                    #expect(replay.problems == [])
                }
                let last = try store.replay(policy: recordedRunPolicy)
                #expect(last.pending.map(\.lsn) == [10])
                #expect(last.pending.map(\.name) == ["editTodo"])
                #expect(last.pending.map(\.collections) == [["todos"]])
            }
        }

        @Test("replay --at takes records in log order up to the first one stamped later")
        func replayAtTime() async throws {
            try await withRecordedRun { directory, checkpoints in
                var configuration = Configuration(durability: .relaxed)
                configuration.sendsMutations = false
                let store = try Store(directory: directory, configuration: configuration, create: false)
                defer { store.close() }
                // The run's clock: LSN 1 at +0 s, LSNs 2…7 at +30 s, LSNs 8…10 at +130 s.
                let start = Date(timeIntervalSince1970: 1_767_225_600)
                #expect(try store.replay(to: .time(start.addingTimeInterval(29))).lsn == 1)
                #expect(try store.replay(to: .time(start.addingTimeInterval(30))).lsn == 7)
                let at = try store.replay(to: .time(start.addingTimeInterval(129)), policy: recordedRunPolicy)
                #expect(at.snapshots.map(\.rows) == checkpoints[4].snapshots.map(\.rows))
                #expect { try store.replay(to: .time(start.addingTimeInterval(-1))) } throws: { ($0 as? ToolError)?.code == .beforeFirstRecord }
                #expect { try store.replay(to: .lsn(11)) } throws: { ($0 as? ToolError)?.code == .pastEnd }
            }
        }

        @Test("freshet replay prints rows, SyncMark, status and pending mutations; --collection takes a prefix")
        func replayCommand() async throws {
            try await withRecordedRun { directory, _ in
                let run = runTool(["replay", directory.path, "--to", "3", "--collection", "fav*"])
                #expect(run.status == 0)
                #expect(run.stderr == [])
                #expect(run.stdout == [
                    "replay of \(directory.path) through LSN 3 (2026-01-01T00:00:30.000Z), 3 records",
                    "",
                    "favourites  1 row  fresh  LSN 3",
                    "  SyncMark  (never fetched)",
                    #"  1  {"name":"one"}"#,
                    "",
                    "pending mutations: none",
                ])
                let json = runTool(["replay", directory.path, "--json", "--collection", "todos"])
                #expect(json.status == 0)
                let lines = try json.stdout.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
                #expect(lines.map { $0["type"] as? String } == ["replay", "collection", "pendingMutation"])
                #expect(lines[0]["lsn"] as? Int == 10)
                let rows = try #require(lines[1]["rows"] as? [[String: Any]])
                #expect(rows.map { $0["id"] as? String } == ["1", "2", "201"])
                #expect((rows[1]["value"] as? [String: Any])?["title"] as? String == "dos")
                #expect(lines[1]["pendingMutations"] as? [String] == ["00000000-0000-0000-0000-000000000003"])
                #expect((lines[1]["syncMark"] as? [String: Any])?["consecutiveFailures"] as? Int == 1)
            }
        }

        @Test("replay says on stderr when --collection matches nothing, and refuses an LSN past the end")
        func replayBadRequests() async throws {
            try await withRecordedRun { directory, _ in
                let none = runTool(["replay", directory.path, "--collection", "pokemon/"])
                #expect(none.status == 0)
                #expect(none.stderr == [#"freshet: no collection matches "pokemon/" in \#(directory.path) (a prefix ends in / or *)"#])
                let past = runTool(["replay", directory.path, "--to", "99"])
                #expect(past.status == 2)
                #expect(past.stderr == ["freshet: LSN 99 is past the end of the log of \(directory.path) (last LSN 10)"])
                let early = runTool(["replay", directory.path, "--at", "2025-12-31T23:59:59Z"])
                #expect(early.status == 2)
                #expect(early.stderr == ["freshet: 2025-12-31T23:59:59.000Z is before the first record of \(directory.path) (first record: LSN 1 at 2026-01-01T00:00:00.000Z)"])
            }
        }
    }
}
