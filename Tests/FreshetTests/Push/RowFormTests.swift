import Foundation
import FreshetHTTP
import FreshetTesting
import Testing
@testable import Freshet

/// Rows the app hands the store (local writes, pushes, optimistic ops) must be one JSON value
/// and are stored in the canonical form the fold gives fetched rows (docs/realtime.md §1).
@Suite("Row form: app-supplied rows are checked and canonical")
struct RowFormTests {
    /// A bad row and the JSON problem the parser names for it.
    static let badRows: [(json: String, problem: String)] = [
        ("not json", #"unexpected "o" at byte 1"#),
        (#"{"a":"#, "unexpected end of input at byte 5"),
        ("", "unexpected end of input at byte 0"),
        (#"{"a":1} {"b":2}"#, "content after the JSON value at byte 8"),
    ]

    static func row(_ json: String, id: String = "z") -> Row { Row(id: id, json: Data(json.utf8)) }

    @Test("a row that is not one JSON value is refused by localWrite, push and mutate with the exact error; nothing is appended",
          arguments: badRows.indices)
    func badRowRefused(index: Int) async throws {
        let (json, problem) = Self.badRows[index]
        try await withTemporaryStore { (store: Store) async throws in
            store.register(todosResource)
            do throws(StoreError) {
                try await store.localWrite("favourites", [.upsert(Self.row(json))])
                Issue.record("localWrite accepted \(json.debugDescription)")
            } catch {
                #expect(error == StoreError(.invalidEvent, "localWrite for favourites: row \"z\" is not one JSON value (\(problem))"))
            }
            do throws(StoreError) {
                try await store.push([.upsert(serverTodo(1, "fine")), .upsert(Self.row(json))], to: "todos")
                Issue.record("push accepted \(json.debugDescription)")
            } catch {
                #expect(error == StoreError(.invalidEvent, "changed for todos: row \"z\" is not one JSON value (\(problem))"))
            }
            let mutation = Mutation(name: "bad", ops: [.upsert(Self.row(json), in: "todos")], request: .init(method: .post, path: "/todos"))
            do throws(MutationError) {
                _ = try await store.mutate(mutation)
                Issue.record("mutate accepted \(json.debugDescription)")
            } catch {
                #expect(error.code == .invalidMutation)
                #expect(error.message == "mutationProposed for todos: row \"z\" is not one JSON value (\(problem))")
            }
            #expect(store.lastLSN == .zero)
            #expect(try store.collections() == [])
            #expect(try store.pendingMutations() == [])
        }
    }

    @Test("a pushed, a locally written and an optimistic row are stored canonically, the same bytes as the row fetched")
    func canonicalLikeFetched() async throws {
        let world = MutationWorld()
        let things = Resource(collection: "things", path: "/things", rows: .rootArray, id: .field("a"))
        world.transport.on("/things", reply: .json(#"[{"b": 1, "a": 2}]"#))
        try await world.withStore { (store: Store) async throws in
            try await store.refresh(things)
            let fetched = try store.snapshot("things").rows
            #expect(fetched == [Self.row(#"{"a":2,"b":1}"#, id: "2")])
            try await store.push([.upsert(Self.row(#"{"b": 1, "a": 2}"#, id: "2"))], to: "things")
            #expect(try store.snapshot("things").rows == fetched)
            #expect(try store.allRecords().last?.event == .changed(.init([.upsert(Self.row(#"{"a":2,"b":1}"#, id: "2"))])))
            try await store.localWrite("favourites", [.upsert(Self.row(" {\"b\" : \"\\u00e9\", \"a\": [1, 2]}\n", id: "f"))])
            #expect(try store.snapshot("favourites").rows == [Self.row(#"{"a":[1,2],"b":"é"}"#, id: "f")])
            let mutation = Mutation(name: "edit", ops: [.upsert(Self.row(#"{ "b": 3, "a": 2 }"#, id: "2"), in: "things")],
                                    request: .init(method: .patch, path: "/things/2"))
            _ = try await store.mutate(mutation)
            let proposed = try store.allRecords().compactMap { record -> Event.MutationProposed? in
                if case .mutationProposed(let p) = record.event { return p }
                return nil
            }
            #expect(proposed.count == 1)
            let first = try #require(proposed.first)
            #expect(first.mutation.ops == [.upsert(Self.row(#"{"a":2,"b":3}"#, id: "2"), in: "things")])
        }
    }

    @Test("export then import of a store with local and pushed rows round-trips")
    func exportImportRoundTrip() async throws {
        try await withTemporaryStore { (store: Store) async throws in
            store.register(todosResource)
            try await store.localWrite("favourites", [.upsert(Self.row(#"{"id": "f1", "note": "x"}"#, id: "f1")), .upsert(Self.row("7", id: "f2"))])
            try await store.push([.upsert(Self.row(#"{"title": "t", "id": 1}"#, id: "1"))], to: "todos",
                                 origin: PushOrigin(source: "todos-sse", eventID: "3"))
            var lines: [String] = []
            _ = try store.exportLog { lines.append($0) }
            try await withTemporaryDirectory { copy in
                #expect(try Store.importLog(lines: lines, into: copy) == (records: 2, lastLSN: LSN(2)))
                let imported = try Store(directory: copy, configuration: .test(), dependencies: .test())
                defer { imported.close() }
                #expect(try imported.allRecords().map(\.event) == store.allRecords().map(\.event))
                #expect(try imported.snapshot("favourites").rows == [Self.row(#"{"id":"f1","note":"x"}"#, id: "f1"), Self.row("7", id: "f2")])
                #expect(try imported.snapshot("todos").rows == [Self.row(#"{"id":1,"title":"t"}"#, id: "1")])
                #expect(try imported.verify().isOK)
            }
        }
    }

    @Test("a push to a collection the store does not know is refused with unknownCollection; nothing is appended")
    func pushToUnknownCollection() async throws {
        try await withTemporaryStore { (store: Store) async throws in
            do throws(StoreError) {
                try await store.push([.upsert(serverTodo(1, "a"))], to: "no-such-collection")
                Issue.record("push to an unknown collection accepted")
            } catch {
                #expect(error == StoreError(.unknownCollection, #"push to "no-such-collection", a collection this store has never seen; register its resource first"#))
            }
            #expect(store.lastLSN == .zero)
            #expect(try store.collections() == [])
            // Known: a registered resource, or a collection with a SyncMark (a local write made one).
            store.register(todosResource)
            #expect(try await store.push([.upsert(serverTodo(1, "a"))], to: "todos") == .applied(LSN(1)))
            try await store.localWrite("favourites", [.upsert(Self.row("1", id: "f"))])
            #expect(try await store.push([.delete(id: "f")], to: "favourites") == .applied(LSN(3)))
        }
    }
}
