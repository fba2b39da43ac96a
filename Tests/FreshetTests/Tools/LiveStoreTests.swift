import Foundation
import Freshet
import ProcessSupport
import Synchronization
import Testing

extension LogToolTests {
    @Suite("Tools on a live store")
    struct LiveStoreTests {
        /// The built `freshet` tool: next to the test bundle, else in `.build/debug`.
        static func executable() throws -> URL {
            let candidates = [
                URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("freshet"),
                Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("freshet"),
                FixtureServer.repositoryRoot.appendingPathComponent(".build/debug/freshet"),
            ]
            guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
                throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: candidates.map(\.path).joined(separator: ", ")])
            }
            return found
        }

        /// Runs `freshet arguments` as a child process; its exit status and standard output lines.
        static func run(_ arguments: [String]) async throws -> (status: Int32, lines: [String]) {
            let (termination, lines) = try await SpawnedProcess.run([try executable().path] + arguments, standardError: .discard)
            return (termination.status, lines)
        }

        @Test("verify, replay and stats run in another process while this one keeps appending, and see one consistent LSN")
        func toolsWhileAppending() async throws {
            try await withTemporaryStore { store in
                try await store.localWrite("live", [.upsert(row("0"))])
                let stop = Atomic<Bool>(false)
                let appender = Task {
                    var n = 0
                    // Bounded: readers pin old pages, so an unbounded writer could fill the map.
                    while !stop.load(ordering: .relaxed), n < 4000 {
                        n += 1
                        try await store.localWrite("live", [.upsert(row(String(n % 25), "v\(n)"))])
                    }
                    return n
                }
                for _ in 0..<3 {
                    let verify = try await Self.run(["verify", store.directory.path])
                    #expect(verify.status == 0)
                    #expect(verify.lines.count == 1)
                    #expect(verify.lines.first?.hasPrefix("ok: ") == true)
                    let replay = try await Self.run(["replay", store.directory.path, "--json"])
                    #expect(replay.status == 0)
                    let stats = try await Self.run(["stats", store.directory.path, "--json"])
                    #expect(stats.status == 0)
                }
                stop.store(true, ordering: .relaxed)
                let appended = try await appender.value
                #expect(appended > 0)
                let final = try await Self.run(["verify", store.directory.path])
                #expect(final.status == 0)
                #expect(final.lines.first?.hasPrefix("ok: \(appended + 1) records through LSN \(appended + 1) ") == true)
            }
        }
    }
}
