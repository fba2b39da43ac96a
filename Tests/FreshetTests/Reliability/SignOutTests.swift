import Foundation
import Testing
@testable import Freshet

/// Issue 12 item 6: signing out erases the user's rows, log, queue and SyncMarks and leaves
/// none of their bytes in the store's files.
@Suite("Sign-out")
struct SignOutTests {
    static let marker = Array("user-secret-7f3a9c".utf8)

    /// How many times `marker` occurs in the files of `directory` and of its subdirectories.
    static func occurrences(in directory: URL) throws -> Int {
        var count = 0
        for name in try FileManager.default.subpathsOfDirectory(atPath: directory.path) {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            let bytes = Array(try Data(contentsOf: directory.appendingPathComponent(name)))
            guard bytes.count >= marker.count else { continue }
            for start in 0...(bytes.count - marker.count) where bytes[start] == marker[0] && Array(bytes[start..<start + marker.count]) == marker { count += 1 }
        }
        return count
    }

    /// A store holding the marker in fetched rows, a local write and a pending mutation.
    static func fill(_ store: Store) async throws -> MutationID {
        let secret = String(decoding: marker, as: UTF8.self)
        try await store.append(replace((0..<200).map { row("\($0)", "\(secret) \($0)") }), to: "todos")
        try await store.localWrite("notes", [.upsert(row("n1", secret))])
        let id = MutationID(rawValue: UUID(uuidString: "00000000-0000-0000-0000-00000000005A") ?? UUID())
        let mutation = Mutation(name: "editTodo", ops: [.upsert(row("1", "\(secret) edited"), in: "todos")], request: .init(method: .put, path: "/todos/1"))
        try await store.append(.mutationProposed(Event.MutationProposed(id: id, mutation: mutation)), to: "todos")
        return id
    }

    static var configuration: Configuration {
        var configuration = Configuration.test()
        configuration.sendsMutations = false
        return configuration
    }

    @Test("with a mutation pending, signOut refuses with mutationsPending saying how many, and erases nothing")
    func refusesWhilePending() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: Self.configuration, dependencies: .test())
            defer { store.close() }
            let id = try await Self.fill(store)
            let error = #expect(throws: StoreError.self) { try store.signOut() }
            #expect(error?.code == .mutationsPending)
            #expect(error?.message.hasPrefix("1 mutation is still waiting to be sent (\(id))") == true)
            #expect(try store.pendingMutations().map(\.id) == [id])
            #expect(try store.snapshot("todos").rows.count == 200)
        }
    }

    @Test("a forced signOut erases every row, log record, queued mutation and SyncMark, and no file of the store holds the user's bytes afterwards")
    func forcedSignOutLeavesNoBytes() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: Self.configuration, dependencies: .test())
            let id = try await Self.fill(store)
            let lastLSN = store.lastLSN
            #expect(try Self.occurrences(in: directory) > 200)
            // What a vacuum killed mid-copy leaves: a full copy of the rows beside the store.
            let leftover = directory.appendingPathComponent(".vacuum-k1ll3d")
            try FileManager.default.createDirectory(at: leftover, withIntermediateDirectories: false)
            try FileManager.default.copyItem(at: directory.appendingPathComponent("data.mdb"), to: leftover.appendingPathComponent("data.mdb"))
            let report = try store.signOut(force: true)
            #expect(report == SignOutReport(erasedEvents: 3, erasedCollections: ["notes", "todos"], discardedMutations: [id]))
            #expect((#expect(throws: StoreError.self) { try store.collections() })?.code == .closed)
            #expect(try Self.occurrences(in: directory) == 0)
            #expect(!FileManager.default.fileExists(atPath: leftover.path))

            let next = try Store(directory: directory, configuration: Self.configuration, dependencies: .test())
            defer { next.close() }
            #expect(try next.collections() == [])
            #expect(try next.pendingMutations() == [])
            #expect(try next.snapshot("todos").syncMark == nil)
            // The new log starts with a checkpoint through the old last LSN: no gap for verify.
            #expect(next.lastLSN == lastLSN.next)
            #expect(try next.latestCheckpoint()?.throughLSN == lastLSN)
            #expect(try await next.localWrite("notes", [.upsert(row("n2"))]) == lastLSN.next.next)
            #expect(try next.verify().problems == [])
        }
    }

    @Test("signOut refuses with locked while another process has the store open, and erases nothing")
    func refusesWhileAnotherProcessHasItOpen() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: Self.configuration, dependencies: .test())
            try await store.localWrite("notes", [.upsert(row("n1", String(decoding: Self.marker, as: UTF8.self)))])
            let reader = try await StoreHelper(["read", directory.path])
            #expect(try await reader.nextLine() == "reading")
            let error = #expect(throws: StoreError.self) { try store.signOut() }
            #expect(error?.code == .locked)
            await reader.kill()
            #expect(try Self.occurrences(in: directory) == 2)  // the log record and the row
            let again = try Store(directory: directory, configuration: Self.configuration, dependencies: .test())
            defer { again.close() }
            #expect(try again.snapshot("notes").rows.map(\.id) == ["n1"])
        }
    }
}
