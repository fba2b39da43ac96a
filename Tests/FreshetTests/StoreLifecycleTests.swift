import Foundation
import Testing
@testable import Freshet

@Suite("Store lifecycle and LSNs")
struct StoreLifecycleTests {
    @Test("LSNs continue across a reopen: 1, 2, 3, then 4, 5")
    func lsnContinuityAcrossReopen() async throws {
        try await withTemporaryDirectory { directory in
            let first = try Store(directory: directory, configuration: .test(), dependencies: .test())
            #expect(first.lastLSN == .zero)
            var before: [LSN] = []
            before.append(try await first.localWrite("favourites", [.upsert(row("1"))]))
            before.append(try await first.invalidate("pokemon", reason: "first"))
            before.append(try await first.append(replace(rows("a", "b")), to: "pokemon"))
            #expect(before == [1, 2, 3])
            #expect(first.lastLSN == 3)
            first.close()

            let second = try Store(directory: directory, configuration: .test(), dependencies: .test())
            defer { second.close() }
            #expect(second.lastLSN == 3)
            var after: [LSN] = []
            after.append(try await second.localWrite("favourites", [.delete(id: "1")]))
            after.append(try await second.append(replace(rows("c")), to: "pokemon"))
            #expect(after == [4, 5])
            #expect(second.lastLSN == 5)

            let records = try second.allRecords()
            #expect(records.map(\.lsn) == [1, 2, 3, 4, 5])
            #expect(records.map(\.kind) == [.localWrite, .invalidated, .fetched, .localWrite, .fetched])
            #expect(records.map(\.collection) == ["favourites", "pokemon", "pokemon", "favourites", "pokemon"])
            #expect(records.allSatisfy { $0.timestamp == TestClock.now })
            #expect(try second.collections() == ["favourites", "pokemon"])
            #expect(try second.ids("pokemon") == ["c"])
            #expect(try second.ids("favourites") == [])
        }
    }

    @Test("readLog honours from, to and collection")
    func readLogRange() async throws {
        try await withTemporaryStore { store in
            for i in 1...6 {
                try await store.localWrite(i.isMultiple(of: 2) ? "even" : "odd", [.upsert(row("\(i)"))])
            }
            var seen: [LSN] = []
            try store.readLog(from: 2, to: 5) { entry in
                seen.append(entry.lsn)
                return true
            }
            #expect(seen == [2, 3, 4, 5])
            #expect(try store.allRecords(collection: "even").map(\.lsn) == [2, 4, 6])

            var firstTwo: [LSN] = []
            try store.readLog { entry in
                firstTwo.append(entry.lsn)
                return firstTwo.count < 2
            }
            #expect(firstTwo == [1, 2])
        }
    }

    @Test("concurrent appends get distinct, gap-free LSNs")
    func concurrentAppends() async throws {
        try await withTemporaryStore { store in
            let lsns = try await withThrowingTaskGroup(of: LSN.self) { group in
                for i in 0..<40 {
                    group.addTask { try await store.localWrite("c\(i % 4)", [.upsert(row("\(i)"))]) }
                }
                return try await group.reduce(into: [LSN]()) { $0.append($1) }
            }
            #expect(lsns.sorted() == (1...40).map { LSN($0) })
            #expect(store.lastLSN == 40)
            #expect(try store.allRecords().map(\.lsn) == (1...40).map { LSN($0) })
            let total = try (0..<4).map { try store.snapshot("c\($0)").rows.count }.reduce(0, +)
            #expect(total == 40)
        }
    }

    @Test("a batch with an invalid event appends nothing")
    func invalidBatchIsAtomic() async throws {
        try await withTemporaryStore { store in
            try await store.localWrite("favourites", [.upsert(row("1"))])
            let error = await #expect(throws: StoreError.self) {
                try await store.append([
                    (collection: "favourites", event: .localWrite(.init([.upsert(row("2"))]))),
                    (collection: "favourites", event: .localWrite(.init([.upsert(Row(id: "", json: Data("{}".utf8)))]))),
                ])
            }
            #expect(error?.code == .invalidName)
            #expect(store.lastLSN == 1)
            #expect(try store.ids("favourites") == ["1"])
            #expect(try store.allRecords().map(\.lsn) == [1])
        }
    }

    @Test("invalid collection names are rejected", arguments: ["", String(repeating: "x", count: 201), "nul\u{0}byte"])
    func invalidCollectionName(name: String) async throws {
        try await withTemporaryStore { store in
            let error = await #expect(throws: StoreError.self) { try await store.invalidate(name) }
            #expect(error?.code == .invalidName)
            #expect(store.lastLSN == .zero)
        }
    }

    @Test("opening the same directory twice in one process throws alreadyOpen; after close it opens again")
    func alreadyOpen() async throws {
        try await withTemporaryDirectory { directory in
            let first = try Store(directory: directory, configuration: .test(), dependencies: .test())
            try await first.localWrite("favourites", [.upsert(row("25", "pikachu"))])

            let error = #expect(throws: StoreError.self) {
                _ = try Store(directory: directory, configuration: .test(), dependencies: .test())
            }
            #expect(error?.code == .alreadyOpen)
            // The failed open did not disturb the open store.
            try await first.localWrite("favourites", [.upsert(row("133", "eevee"))])
            first.close()

            let again = try Store(directory: directory, configuration: .test(), dependencies: .test())
            defer { again.close() }
            #expect(again.lastLSN == 2)
            #expect(try again.ids("favourites") == ["25", "133"])
        }
    }

    @Test("the same directory reached through another spelling or a symlink is already open")
    func alreadyOpenThroughOtherPaths() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            defer { store.close() }
            let link = directory.deletingLastPathComponent().appendingPathComponent(directory.lastPathComponent + "-link")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: directory)
            defer { try? FileManager.default.removeItem(at: link) }

            for other in [URL(fileURLWithPath: directory.path + "/./"), URL(fileURLWithPath: directory.path + "/sub/.."), link] {
                let error = #expect(throws: StoreError.self, "\(other.path)") {
                    _ = try Store(directory: other, configuration: .test(), dependencies: .test())
                }
                #expect(error?.code == .alreadyOpen, "\(other.path)")
            }
        }
    }

    @Test("a closed store refuses appends and reads with closed")
    func closedStore() async throws {
        try await withTemporaryStore { store in
            store.close()
            store.close() // a second close does nothing
            let appendError = await #expect(throws: StoreError.self) { try await store.invalidate("pokemon") }
            #expect(appendError?.code == .closed)
            let readError = #expect(throws: StoreError.self) { try store.snapshot("pokemon") }
            #expect(readError?.code == .closed)
        }
    }

    @Test("a file where the store directory should be is notAStore")
    func fileIsNotAStore() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let file = directory.appendingPathComponent("plain.txt")
            try Data("hello".utf8).write(to: file)
            let error = #expect(throws: StoreError.self) {
                _ = try Store(directory: file, configuration: .test(), dependencies: .test())
            }
            #expect(error?.code == .notAStore)
        }
    }
}
