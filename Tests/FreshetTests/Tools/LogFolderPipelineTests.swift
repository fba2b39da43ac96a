import Foundation
@testable import Freshet
import FreshetTesting
@testable import FreshetLMDB
import Testing

extension LogToolTests {
    /// `LogFolder` reads and decodes on the calling thread while `FoldPipeline` folds the chunk
    /// before on its own; whatever the chunk size, the result must be what one chunk gives.
    @Suite("LogFolder and FoldPipeline")
    struct LogFolderPipelineTests {
        /// What a fold of the whole log leaves: every scratch table, the problems, the counts.
        struct Outcome: Equatable {
            var tables: [[[UInt8]]]
            var problems: [StoreProblem]
            var visited: [LSN]
            var recordCount: Int
            var lastFolded: LSN?
            var policies: [String: LSN]
        }

        static func fold(_ directory: URL, chunkSize: Int) throws -> Outcome {
            var configuration = Configuration(durability: .relaxed)
            configuration.sendsMutations = false
            let store = try Store(directory: directory, configuration: configuration, create: false)
            defer { store.close() }
            let folder = try LogFolder(store: store, chunkSize: chunkSize)
            var visited: [LSN] = []
            try folder.run(to: .end, visit: { visited.append($0.lsn) })
            let dbs = store.state.dbs
            let tables = [dbs.log, dbs.rows, dbs.rowIndex, dbs.marks, dbs.meta, dbs.pending, dbs.mutations, dbs.idMap, dbs.confirmed].map { db in
                folder.scratch.tables.entries(db).map { $0.key + [0xFF] + $0.value }
            }
            return Outcome(tables: tables, problems: folder.problems, visited: visited, recordCount: folder.recordCount,
                           lastFolded: folder.lastFolded?.lsn, policies: folder.recordedPolicies.mapValues(\.lsn))
        }

        @Test("chunks of 1, 2 and 3 records fold to the tables, visits and counts of one chunk, with a missing proposal and a damaged record; problems come per chunk, reading's first")
        func chunkSizesAgree() async throws {
            try await withRecordedRun { directory, _ in
                // LSN 4 is the create's proposal (its confirmation, LSN 5, then does not fold);
                // LSN 8 (the invalidation) fails its checksum.
                try withRawEnvironment(directory) { env, dbs in
                    try env.write { txn in
                        let log = try #require(dbs["log"])
                        try txn.delete(log, key: lsnKey(4))
                        var bytes = try #require(try txn.get(log, key: lsnKey(8)))
                        bytes[bytes.count - 10] ^= 0x01
                        try txn.put(log, key: lsnKey(8), value: bytes)
                    }
                }
                func named(_ problems: [StoreProblem]) -> [String] {
                    problems.map { "\($0.database) \($0.lsn.map { "\($0)" } ?? "-")" }
                }
                var whole = try Self.fold(directory, chunkSize: LogFolder.chunkSize)
                // One chunk: what reading found (the gap, the checksum), then what did not fold.
                #expect(named(whole.problems) == ["log 4", "log 8", "log 5"])
                #expect(whole.problems[0].message == "LSN 4 is missing: the log jumps from 3 to 5")
                #expect(whole.problems[1].message.hasPrefix("record at LSN 8 fails its CRC-32C"))
                #expect(whole.problems[2].message == "mutationConfirmed does not fold: mutationConfirmed for mutation 00000000-0000-0000-0000-000000000001, which was never proposed")
                #expect(whole.visited == [1, 2, 3, 5, 6, 7, 9, 10])
                #expect(whole.recordCount == 8)
                #expect(whole.lastFolded == 10)
                let problems = whole.problems
                whole.problems = []
                for size in [1, 2, 3] {
                    var chunked = try Self.fold(directory, chunkSize: size)
                    // LSN 8 is read with the chunk after the one that holds LSN 5.
                    #expect(chunked.problems == [problems[0], problems[2], problems[1]], "chunks of \(size)")
                    chunked.problems = []
                    #expect(chunked == whole, "chunks of \(size)")
                }
            }
        }

        struct Refused: Error, Equatable { let chunk: Int }

        /// A chunk whose first problem names it (`chunk 3`), as the reader would send it.
        static func chunk(_ n: Int) -> FoldChunk {
            var chunk = FoldChunk()
            chunk.problems = [StoreProblem(database: "log", lsn: LSN(UInt64(n)), message: "read \(n)")]
            return chunk
        }

        /// The chunks a pipeline's fold was given, in order (written by its thread, read after `finish`).
        final class Seen: @unchecked Sendable {
            // @unchecked: guarded by `lock`.
            private let lock = NSLock()
            private var chunks: [Int] = []
            var all: [Int] { lock.withLock { chunks } }

            /// Notes the chunk made by ``chunk(_:)`` and returns its number.
            func add(_ chunk: FoldChunk) -> Int {
                let n = Int(chunk.problems.first?.lsn?.rawValue ?? 0)
                lock.withLock { chunks.append(n) }
                return n
            }
        }

        @Test("problems come back in chunk order, each chunk's reading problems before its fold's, with more chunks than the pipeline holds")
        func problemsInOrder() throws {
            let seen = Seen()
            let pipeline = FoldPipeline { chunk in
                let n = seen.add(chunk)
                return [StoreProblem(database: "rows", lsn: LSN(UInt64(n)), message: "fold \(n)")]
            }
            defer { pipeline.cancel() }
            for n in 1...20 { try pipeline.submit(Self.chunk(n)) }
            let problems = try pipeline.finish()
            #expect(problems.map(\.message) == (1...20).flatMap { ["read \($0)", "fold \($0)"] })
            #expect(seen.all == Array(1...20))
        }

        @Test("a fold that throws stops the pipeline: its error comes out of submit or finish, and no later chunk is folded")
        func failureStops() throws {
            let seen = Seen()
            let pipeline = FoldPipeline { chunk in
                let n = seen.add(chunk)
                if n == 3 { throw Refused(chunk: n) }
                return []
            }
            defer { pipeline.cancel() }
            for n in 1...10 {
                do {
                    try pipeline.submit(Self.chunk(n))
                } catch {
                    // Depending on when the fold of chunk 3 ends, a later submit reports it.
                    #expect(error as? Refused == Refused(chunk: 3))
                    #expect(n > 3, "chunk \(n) refused")
                    break
                }
            }
            #expect(throws: Refused(chunk: 3)) { try pipeline.finish() }
            #expect(seen.all == [1, 2, 3])
        }

        @Test("cancel with nothing submitted ends the worker; finish after it reports nothing")
        func cancelIdle() throws {
            let seen = Seen()
            let pipeline = FoldPipeline { chunk in
                _ = seen.add(chunk)
                return []
            }
            pipeline.cancel()
            #expect(try pipeline.finish() == [])
            #expect(seen.all == [])
        }
    }
}
