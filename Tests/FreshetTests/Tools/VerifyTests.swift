import Foundation
import Freshet
import FreshetCommands
import FreshetTesting
@testable import FreshetLMDB
import Testing

extension LogToolTests {
    @Suite("freshet verify")
    struct VerifyTests {
        func verify(_ directory: URL) throws -> VerifyReport {
            var configuration = Configuration(durability: .relaxed)
            configuration.sendsMutations = false
            let store = try Store(directory: directory, configuration: configuration, create: false)
            defer { store.close() }
            return try store.verify()
        }

        @Test("a store made by the real code verifies: replay equals every materialized database")
        func intactStoreVerifies() async throws {
            try await withRecordedRun { directory, _ in
                let report = try verify(directory)
                #expect(report.problems == [])
                #expect(report.recordCount == 10)
                #expect(report.lastLSN == 10)
                let run = runTool(["verify", directory.path])
                #expect(run.status == 0)
                #expect(run.stderr == [])
                #expect(run.stdout == ["ok: 10 records through LSN 10 replay to the stored state (\(report.comparedEntries) entries compared)"])
            }
        }

        @Test("a flipped byte in a record is named by database and LSN")
        func flippedRecordByte() async throws {
            try await withRecordedRun { directory, _ in
                try withRawEnvironment(directory) { env, dbs in
                    try env.write { txn in
                        let log = try #require(dbs["log"])
                        var bytes = try #require(try txn.get(log, key: lsnKey(2)))
                        bytes[bytes.count - 10] ^= 0x01
                        try txn.put(log, key: lsnKey(2), value: bytes)
                    }
                }
                let report = try verify(directory)
                let first = try #require(report.problems.first)
                #expect(first.database == "log")
                #expect(first.lsn == 2)
                #expect(first.message.hasPrefix("record at LSN 2 fails its CRC-32C"))
                let run = runTool(["verify", directory.path])
                #expect(run.status == 1)
                #expect(run.stderr.count == 1)
                #expect(run.stderr.first?.hasPrefix("freshet: \(report.problems.count) problems in \(directory.path); first: log · LSN 2: record at LSN 2 fails its CRC-32C") == true)
            }
        }

        @Test("a flipped byte in a stored row is named by database, collection, row ID and LSN")
        func flippedRowByte() async throws {
            try await withRecordedRun { directory, _ in
                try withRawEnvironment(directory) { env, dbs in
                    try env.write { txn in
                        let rows = try #require(dbs["rows"])
                        var bytes = try #require(try txn.get(rows, key: rowKey("todos", position: 1)))
                        bytes[bytes.count - 3] ^= 0x20
                        try txn.put(rows, key: rowKey("todos", position: 1), value: bytes)
                    }
                }
                // Row 2 sits at position 1 of todos; the pending edit (LSN 10) is the last record
                // that changed what todos shows (its SyncMark's rowsLSN).
                #expect(try verify(directory).problems == [
                    StoreProblem(database: "rows", collection: "todos", rowID: "2", lsn: 10, message: "stored value differs from the replay (page 0, index 1)"),
                ])
            }
        }

        @Test("every one of 60 seeded random bit flips in stored row values is caught and names that row")
        func randomRowFlips() async throws {
            try await withRecordedRun { directory, _ in
                // The stored rows: (key, value, row ID) of every entry of `rows`.
                let stored: [(key: [UInt8], value: [UInt8])] = try withRawEnvironment(directory) { env, dbs in
                    let rows = try #require(dbs["rows"])
                    return try env.read { txn in
                        var all: [(key: [UInt8], value: [UInt8])] = []
                        try txn.forEach(rows) { k, v in
                            all.append((Array(k), Array(v)))
                            return true
                        }
                        return all
                    }
                }
                #expect(stored.count == 4) // todos 1, 2, 201 and favourites 1
                for draw in FreshetTesting.SeededRandom.values(60, seed: 8) {
                    let entry = stored[Int(draw % UInt64(stored.count))]
                    // Flip one bit inside the row's JSON (after the ID), so the ID stays readable.
                    let idLength = Int(entry.value[0])
                    let jsonStart = 1 + idLength
                    let offset = jsonStart + Int((draw >> 8) % UInt64(entry.value.count - jsonStart))
                    var damaged = entry.value
                    damaged[offset] ^= UInt8(1 << ((draw >> 32) % 8))
                    try withRawEnvironment(directory) { env, dbs in
                        let rows = try #require(dbs["rows"])
                        try env.write { txn in try txn.put(rows, key: entry.key, value: damaged) }
                    }
                    let problems = try verify(directory).problems
                    let id = String(decoding: entry.value[1..<jsonStart], as: UTF8.self)
                    #expect(problems.count == 1)
                    #expect(problems.first?.database == "rows")
                    #expect(problems.first?.rowID == id)
                    try withRawEnvironment(directory) { env, dbs in
                        let rows = try #require(dbs["rows"])
                        try env.write { txn in try txn.put(rows, key: entry.key, value: entry.value) }
                    }
                }
                #expect(try verify(directory).problems == [])
            }
        }

        @Test("a flipped byte in a SyncMark is named by database, collection and LSN")
        func flippedSyncMarkByte() async throws {
            try await withRecordedRun { directory, _ in
                try withRawEnvironment(directory) { env, dbs in
                    try env.write { txn in
                        let marks = try #require(dbs["marks"])
                        var bytes = try #require(try txn.get(marks, key: Array("todos".utf8)))
                        bytes[bytes.count / 2] ^= 0x04
                        try txn.put(marks, key: Array("todos".utf8), value: bytes)
                    }
                }
                #expect(try verify(directory).problems == [
                    StoreProblem(database: "marks", collection: "todos", lsn: 10, message: "stored value differs from the replay"),
                ])
            }
        }

        @Test("a deleted record is named by its LSN; a deleted last record by the store's last LSN")
        func deletedRecords() async throws {
            try await withRecordedRun { directory, _ in
                try withRawEnvironment(directory) { env, dbs in
                    let log = try #require(dbs["log"])
                    try env.write { txn in _ = try txn.delete(log, key: lsnKey(3)) }
                }
                let problems = try verify(directory).problems
                #expect(problems.first == StoreProblem(database: "log", lsn: 3, message: "LSN 3 is missing: the log jumps from 2 to 4"))
                // Without the local write, favourites has no rows and no SyncMark after replay.
                #expect(problems.contains(StoreProblem(database: "marks", collection: "favourites", message: "stored, but the replay has no such entry")))
            }
            try await withRecordedRun { directory, _ in
                try withRawEnvironment(directory) { env, dbs in
                    let log = try #require(dbs["log"])
                    try env.write { txn in _ = try txn.delete(log, key: lsnKey(10)) }
                }
                let problems = try verify(directory).problems
                #expect(problems.contains(StoreProblem(database: "meta", lsn: 9, message: "the store says LSNs were assigned up to 10, the log ends at 9: records after 9 are missing")))
                #expect(problems.contains(StoreProblem(database: "pending", lsn: 10, message: "stored, but the replay has no such entry")))
            }
        }

        @Test("a truncated record is named by its LSN; a store of a newer format exits 2 naming the format")
        func truncatedRecordAndNewerFormat() async throws {
            try await withRecordedRun { directory, _ in
                try withRawEnvironment(directory) { env, dbs in
                    let log = try #require(dbs["log"])
                    try env.write { txn in
                        let bytes = try #require(try txn.get(log, key: lsnKey(4)))
                        try txn.put(log, key: lsnKey(4), value: Array(bytes.prefix(20)))
                    }
                }
                let problems = try verify(directory).problems
                #expect(problems.first == StoreProblem(database: "log", lsn: 4, message: "record at LSN 4 is 20 bytes, shorter than the 30-byte minimum"))
                // The confirmation of the lost proposal does not fold; verify says so and goes on.
                #expect(problems.dropFirst().first == StoreProblem(database: "log", collection: "todos", lsn: 5,
                                                                   message: "mutationConfirmed does not fold: mutationConfirmed for mutation 00000000-0000-0000-0000-000000000001, which was never proposed"))
                try withRawEnvironment(directory) { env, dbs in
                    let meta = try #require(dbs["meta"])
                    try env.write { txn in try txn.put(meta, key: Array("formatVersion".utf8), value: [3]) }
                }
                for command in ["verify", "replay", "stats", "export", "dump"] {
                    let run = runTool([command, directory.path])
                    #expect(run.status == 2)
                    #expect(run.stderr == ["freshet: cannot open store \(directory.path): \(directory.standardizedFileURL.path) has store format 3; this Freshet reads formats 1 to 2"])
                }
            }
        }

        @Test("verify of something that is not a store exits 2 with one line naming it")
        func notAStore() async throws {
            try await withTemporaryDirectory { directory in
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let run = runTool(["verify", directory.path])
                #expect(run.status == 2)
                #expect(run.stderr == ["freshet: cannot open store \(directory.path): \(directory.standardizedFileURL.path) holds no Freshet store (no data.mdb)"])
                #expect(run.stdout == [])
            }
        }
    }
}
