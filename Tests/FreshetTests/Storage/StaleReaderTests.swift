import Foundation
import FreshetLMDB
import Testing
@testable import Freshet

/// Issue 7 item 2: read-only processes killed mid-read leave LMDB reader slots behind; they
/// are cleared at open and when the reader table is full (`mdb_reader_check`).
@Suite("Stale reader slots")
struct StaleReaderTests {
    /// `count` read-only child processes that each hold a read transaction, then are killed.
    static func killReaders(_ count: Int, of directory: URL) async throws {
        var readers: [StoreHelper] = []
        do {
            for _ in 0..<count {
                let reader = try await StoreHelper(["read", directory.path])
                readers.append(reader)
                #expect(try await reader.nextLine() == "reading")
            }
        } catch {
            for reader in readers { await reader.kill() }
            throw error
        }
        for reader in readers {
            #expect(await reader.kill() == SIGKILL)
        }
    }

    /// 200 commits that each rewrite the same three rows with values of the same size.
    static func rewrite(_ store: Store, round: Int) async throws {
        for i in 0..<200 {
            let n = String(format: "%03d", i)
            try await store.localWrite("notes", [
                .upsert(row("a", "round \(round) edit \(n)")),
                .upsert(row("b", "round \(round) edit \(n)")),
                .upsert(row("c", "round \(round) edit \(n)")),
            ])
        }
    }

    @Test("after read-only processes are killed mid-read while the app has the store open, its writes reuse pages exactly as in a copy of the store that never had readers")
    func killedReadersDoNotGrowTheFile() async throws {
        try await withTemporaryDirectory { withReaders in
            try await withTemporaryDirectory { control in
                let seed = try Store(directory: withReaders, configuration: .test(), dependencies: .test())
                try await Self.rewrite(seed, round: 0)
                seed.close()
                // The control starts from the same bytes and never sees a reader.
                try FileManager.default.createDirectory(at: control, withIntermediateDirectories: true)
                try FileManager.default.copyItem(at: withReaders.appendingPathComponent("data.mdb"), to: control.appendingPathComponent("data.mdb"))
                let store = try Store(directory: withReaders, configuration: .test(), dependencies: .test())
                defer { store.close() }
                let twin = try Store(directory: control, configuration: .test(), dependencies: .test())
                defer { twin.close() }

                // `freshet dump … | head -1` killed while the app runs: three times over.
                try await Self.killReaders(3, of: withReaders)

                #expect(try store.ids("notes") == ["a", "b", "c"])
                for round in 1...2 {
                    try await Self.rewrite(store, round: round)
                    try await Self.rewrite(twin, round: round)
                    // The same commits on the same file allocate the same pages when no reader
                    // pins old ones; a dead reader's snapshot would keep every page freed since
                    // it began from being reused, and the file would grow with every commit.
                    let pages = try store.env.info().lastPage
                    #expect(pages == (try twin.env.info().lastPage), "round \(round)")
                    let size = try FileManager.default.attributesOfItem(atPath: withReaders.appendingPathComponent("data.mdb").path)[.size] as? Int
                    let twinSize = try FileManager.default.attributesOfItem(atPath: control.appendingPathComponent("data.mdb").path)[.size] as? Int
                    #expect(size == twinSize, "round \(round)")
                }
                #expect(try store.snapshot("notes").rows.map { try name(of: $0) } == ["round 2 edit 199", "round 2 edit 199", "round 2 edit 199"])
            }
        }
    }

    @Test("when dead readers fill the reader table, the next read clears their slots and succeeds, and writes go on")
    func readersFullIsCleared() async throws {
        try await withTemporaryDirectory { directory in
            var configuration = Configuration.test()
            configuration.maxReaders = 3
            let store = try Store(directory: directory, configuration: configuration, dependencies: .test())
            defer { store.close() }
            try await store.localWrite("notes", [.upsert(row("a", "first"))])
            // Three children take all three slots and die holding them.
            try await Self.killReaders(3, of: directory)
            #expect(try store.env.readerSlots() == 3)

            #expect(try store.ids("notes") == ["a"])
            // That read cleared the dead slots: none is left to clear.
            #expect(try store.env.clearStaleReaders() == 0)
            #expect(try await store.localWrite("notes", [.upsert(row("b", "second"))]) == 2)
            #expect(try store.ids("notes") == ["a", "b"])
        }
    }
}
