import Foundation
import Freshet
import FreshetCommands
import FreshetTesting
@testable import FreshetLMDB
import Testing

extension LogToolTests {
    @Suite("The read-only tools leave the store as it was")
    struct ReadOnlyToolTests {
        static let commands: [[String]] = [
            ["dump"], ["dump", "--json"], ["replay"], ["replay", "--to", "3", "--json"], ["verify"], ["verify", "--json"],
            ["stats"], ["stats", "--json"], ["why", "todos"], ["why", "todos", "--json"], ["export"],
        ]

        func fileBytes(_ directory: URL) throws -> Data {
            try Data(contentsOf: directory.appendingPathComponent("data.mdb"))
        }

        @Test("every read-only command, on an intact and on a damaged store, leaves data.mdb byte for byte as it was (a pending mutation is never sent)")
        func neverModifies() async throws {
            try await withRecordedRun { directory, _ in
                let before = try fileBytes(directory)
                for command in Self.commands {
                    let run = runTool([command[0], directory.path] + command.dropFirst())
                    #expect(run.status == 0, "\(command): \(run.stderr)")
                }
                #expect(try fileBytes(directory) == before)

                try damageRecord(directory, lsn: 3, fromEnd: 5, mask: 0x40)
                let damaged = try fileBytes(directory)
                for command in Self.commands {
                    let run = runTool([command[0], directory.path] + command.dropFirst())
                    #expect(run.status == 1, "\(command): \(run.stderr)")
                }
                #expect(try fileBytes(directory) == damaged)
            }
        }

        @Test("why --at a time before the first record exits 2 with one line naming the time")
        func whyBeforeFirstRecord() async throws {
            try await withRecordedRun { directory, _ in
                let run = runTool(["why", directory.path, "todos", "--at", "2025-12-31T23:59:59Z"])
                #expect(run.status == 2)
                #expect(run.stdout == [])
                #expect(run.stderr == ["freshet: 2025-12-31T23:59:59.000Z is before the first record of \(directory.path)"])
            }
        }
    }
}
