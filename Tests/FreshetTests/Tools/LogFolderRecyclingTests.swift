import Foundation
@testable import Freshet
import FreshetTesting
import Testing

extension LogToolTests {
    /// Without a `visit`, `LogFolder` decodes rows into shared blocks and refills folded
    /// records' ops arrays (issue 8's speed round 5): whatever the chunk size, the tables are
    /// the ones a fold whose rows are each their own gives.
    @Suite("LogFolder's shared rows and refilled records")
    struct LogFolderRecyclingTests {
        static func tables(_ store: Store, chunkSize: Int, visiting: Bool) throws -> [[[UInt8]]] {
            let folder = try LogFolder(store: store, chunkSize: chunkSize)
            var visited = 0
            try folder.run(to: .end, visit: visiting ? { _ in visited += 1 } : nil)
            #expect(folder.recordCount == 9)
            #expect(visited == (visiting ? 9 : 0))
            let dbs = store.state.dbs
            return [dbs.rows, dbs.rowIndex, dbs.marks, dbs.meta].map { db in
                folder.scratch.tables.entries(db).map { $0.key + [0xFF] + $0.value }
            }
        }

        @Test("row changes of 2, 1, 3, 0 and 1 ops among other records fold in chunks of 1 to 4 as in one chunk")
        func chunkSizesAgree() async throws {
            try await withTemporaryStore { store in
                try await store.localWrite("favourites", [.upsert(row("1")), .upsert(row("2"))])
                try await store.localWrite("favourites", [.upsert(row("3"))])
                try await store.invalidate("favourites", reason: "pulled")
                try await store.localWrite("favourites", [.delete(id: "1"), .upsert(row("2", "two")), .upsert(row("4"))])
                try await store.localWrite("favourites", [])
                _ = try await store.append(.changed(.init([.upsert(row("7"))], origin: PushOrigin(source: "sse", eventID: "1"))), to: "pokemon")
                try await store.localWrite("favourites", [.upsert(row("3", "three"))])
                try await store.invalidate("pokemon")
                try await store.localWrite("other", [.upsert(row("9")), .delete(id: "9")])
                let expected = try Self.tables(store, chunkSize: LogFolder.chunkSize, visiting: true)
                for size in [1, 2, 3, 4, LogFolder.chunkSize] {
                    #expect(try Self.tables(store, chunkSize: size, visiting: false) == expected, "chunks of \(size)")
                }
                let replay = try store.replay(collections: .name("favourites"))
                #expect(replay.snapshots.first?.rows == [row("2", "two"), row("3", "three"), row("4")])
                #expect(replay.snapshots.first?.rows.map(\.json.startIndex) == [0, 0, 0])
            }
        }
    }
}
