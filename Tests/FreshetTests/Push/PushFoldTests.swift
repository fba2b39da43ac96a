import Foundation
import FreshetHTTP
import FreshetTesting
import Testing
@testable import Freshet

/// The push API (`Store.push`): `changed` events with a push origin, folded like fetched rows.
@Suite("Server push: folding changed events")
struct PushFoldTests {
    static func origin(_ id: String, source: String = "todos-sse") -> PushOrigin {
        PushOrigin(source: source, eventID: id)
    }

    @Test("a pushed upsert and delete fold into the base rows; observers get one snapshot for the push")
    func foldsLikeFetch() async throws {
        let world = MutationWorld()
        world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")])))
        try await world.withStore { store in
            try await store.refresh(todosResource)
            var observation = store.observe("todos").makeAsyncIterator()
            let first = try #require(try await observation.next())
            #expect(first.rows.map(\.id) == ["1", "2"])
            let result = try await store.push([.upsert(serverTodo(3, "three")), .delete(id: "1")], to: "todos", origin: Self.origin("1"))
            #expect(result == .applied(LSN(2)))
            // One snapshot for the push (both ops), never one per op.
            let last = try #require(try await observation.next())
            #expect(last.rows == [serverTodo(2, "two"), serverTodo(3, "three")])
            #expect(last.lsn == LSN(2))
            let mark = try #require(last.syncMark)
            #expect(mark.pushCursors == [PushCursor(source: "todos-sse", eventID: "1", lsn: LSN(2))])
            #expect(mark.rowsLSN == LSN(2))
            // A push is not a validation of the whole collection: the fetch's times stay.
            #expect(mark.fetchedLSN == LSN(1))
        }
    }

    @Test("a re-delivered event appends nothing; an older sequence is a duplicate; a newer one folds")
    func duplicates() async throws {
        try await withTemporaryStore { store in
            store.register(todosResource)
            #expect(try await store.push([.upsert(serverTodo(1, "a"))], to: "todos", origin: Self.origin("5")) == .applied(LSN(1)))
            let cursor = PushCursor(source: "todos-sse", eventID: "5", lsn: LSN(1))
            #expect(try await store.push([.upsert(serverTodo(1, "a again"))], to: "todos", origin: Self.origin("5")) == .duplicate(cursor))
            #expect(try await store.push([.upsert(serverTodo(1, "older"))], to: "todos", origin: Self.origin("4")) == .duplicate(cursor))
            #expect(store.lastLSN == LSN(1))
            #expect(try await store.push([.upsert(serverTodo(1, "b"))], to: "todos", origin: Self.origin("6")) == .applied(LSN(2)))
            // Another source has its own cursor; an event without an origin always folds.
            #expect(try await store.push([.upsert(serverTodo(2, "ws"))], to: "todos", origin: Self.origin("1", source: "ws")) == .applied(LSN(3)))
            #expect(try await store.push([.upsert(serverTodo(3, "no id"))], to: "todos") == .applied(LSN(4)))
            let snapshot = try store.snapshot("todos")
            #expect(snapshot.rows == [serverTodo(1, "b"), serverTodo(2, "ws"), serverTodo(3, "no id")])
            #expect(snapshot.syncMark?.pushCursors == [PushCursor(source: "todos-sse", eventID: "6", lsn: LSN(2)), PushCursor(source: "ws", eventID: "1", lsn: LSN(3))])
        }
    }

    @Test("opaque event IDs: only the same ID as the last is a duplicate")
    func opaqueIDs() async throws {
        try await withTemporaryStore { (store: Store) async throws in
            store.register(todosResource)
            #expect(try await store.push([.upsert(serverTodo(1, "a"))], to: "todos", origin: Self.origin("b7f")) == .applied(LSN(1)))
            #expect(try await store.push([.upsert(serverTodo(1, "a"))], to: "todos", origin: Self.origin("b7f")) == .duplicate(PushCursor(source: "todos-sse", eventID: "b7f", lsn: LSN(1))))
            #expect(try await store.push([.upsert(serverTodo(1, "c"))], to: "todos", origin: Self.origin("a00")) == .applied(LSN(2)))
        }
        #expect(Self.origin("10").repeats("9") == false)
        #expect(Self.origin("9").repeats("10") == true)
        #expect(Self.origin("0009").repeats("9") == true)
        #expect(Self.origin("12345678901234567890").sequence == nil)  // 20 digits: opaque
        #expect(Self.origin("+1").sequence == nil)
    }

    @Test("the same event appended twice in a race folds once: the fold checks the cursor too")
    func raceFoldsOnce() async throws {
        try await withTemporaryStore { store in
            let event = Event.changed(.init([.upsert(serverTodo(1, "a"))], origin: Self.origin("1")))
            try await store.append([("todos", event), ("todos", .changed(.init([.upsert(serverTodo(1, "changed twice"))], origin: Self.origin("1"))))])
            let snapshot = try store.snapshot("todos")
            #expect(snapshot.rows == [serverTodo(1, "a")])
            #expect(snapshot.syncMark?.rowsLSN == LSN(1))
            #expect(snapshot.syncMark?.lastLSN == LSN(2))
            #expect(try store.verify().isOK)
        }
    }

    @Test("a pending edit stays on top of a pushed change to its row; rejected, the pushed value shows")
    func rebaseThenRollback() async throws {
        let world = MutationWorld()
        let patch = Gate()
        world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")])))
        world.transport.on(.patch, "/todos/2", reply: .held(patch, then: .json(#"{"error":"no"}"#, status: 422)))
        try await world.withStore { store in
            try await store.refresh(todosResource)
            let pending = try await store.mutate(editTodo("2", title: "mine"))
            await patch.waitUntilReached()
            try await store.push([.upsert(serverTodo(2, "pushed")), .upsert(serverTodo(3, "new"))], to: "todos", origin: Self.origin("1"))
            let during = try store.snapshot("todos")
            #expect(during.rows.map(\.id) == ["1", "2", "3"])
            #expect(try title("2", in: store) == "mine")
            #expect(during.pendingMutations == [pending.id])
            patch.release()
            _ = await settle(pending)
            let after = try store.snapshot("todos")
            #expect(after.rows == [serverTodo(1, "one"), serverTodo(2, "pushed"), serverTodo(3, "new")])
            #expect(after.pendingMutations.isEmpty)
        }
    }

    @Test("a pending edit over a pushed change; confirmed, the server's answer replaces both")
    func rebaseThenConfirm() async throws {
        let world = MutationWorld()
        let patch = Gate()
        world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")])))
        world.transport.on(.patch, "/todos/2", reply: .held(patch, then: .json(todoJSON(2, "mine, confirmed"))))
        try await world.withStore { store in
            try await store.refresh(todosResource)
            let pending = try await store.mutate(editTodo("2", title: "mine"))
            await patch.waitUntilReached()
            try await store.push([.upsert(serverTodo(2, "pushed"))], to: "todos", origin: Self.origin("1"))
            #expect(try title("2", in: store) == "mine")
            patch.release()
            _ = try await pending.outcome()
            let after = try store.snapshot("todos")
            #expect(after.rows == [serverTodo(1, "one"), serverTodo(2, "mine, confirmed")])
            #expect(after.pendingMutations.isEmpty)
            #expect(try store.verify().isOK)
        }
    }

    @Test("the cursor survives a relaunch and replay and verify rebuild it")
    func durableCursor() async throws {
        try await withTemporaryDirectory { directory in
            do {
                let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
                defer { store.close() }
                store.register(todosResource)
                store.register(Resource(collection: "posts", path: "/posts", rows: .rootArray, id: .field("id")))
                try await store.push([.upsert(serverTodo(1, "a"))], to: "todos", origin: Self.origin("7"))
                try await store.push([.upsert(Row(id: "1", json: Data(#"{"id":1}"#.utf8)))], to: "posts", origin: Self.origin("8"))
                try await store.push([.delete(id: "1")], to: "todos", origin: Self.origin("3", source: "other"))
                #expect(try store.pushCursor(source: "nobody") == nil)
            }
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            defer { store.close() }
            #expect(try store.pushCursor(source: "todos-sse") == PushCursor(source: "todos-sse", eventID: "8", lsn: LSN(2)))
            #expect(try store.pushCursor(source: "other") == PushCursor(source: "other", eventID: "3", lsn: LSN(3)))
            #expect(try await store.push([.upsert(serverTodo(1, "again"))], to: "todos", origin: Self.origin("7")) == .duplicate(PushCursor(source: "todos-sse", eventID: "7", lsn: LSN(1))))
            let report = try store.verify()
            #expect(report.isOK)
            #expect(report.recordCount == 3)
            let replayed = try store.replay()
            #expect(replayed.snapshots.map(\.collection) == ["posts", "todos"])
            #expect(replayed.snapshots.map { $0.syncMark?.pushCursors ?? [] } == [[PushCursor(source: "todos-sse", eventID: "8", lsn: LSN(2))],
                                                                                    [PushCursor(source: "other", eventID: "3", lsn: LSN(3)), PushCursor(source: "todos-sse", eventID: "7", lsn: LSN(1))]])
        }
    }

    @Test("dump and export show the origin; import brings it back")
    func dumpAndExport() async throws {
        try await withTemporaryStore { store in
            store.register(todosResource)
            try await store.push([.upsert(serverTodo(1, "a")), .delete(id: "9")], to: "todos", origin: Self.origin("42"))
            let record = try #require(try store.allRecords().first)
            #expect(record.summary == "upsert 1, delete 9 (push todos-sse id 42)")
            #expect(record.jsonLine.contains(#""origin":{"eventID":"42","source":"todos-sse"}"#))
            var lines: [String] = []
            _ = try store.exportLog { lines.append($0) }
            try await withTemporaryDirectory { copy in
                _ = try Store.importLog(lines: lines, into: copy)
                let imported = try Store(directory: copy, configuration: .test(), dependencies: .test())
                defer { imported.close() }
                #expect(try imported.allRecords().map(\.event) == [record.event])
                #expect(try imported.pushCursor(source: "todos-sse")?.eventID == "42")
            }
        }
    }

    @Test("bad origins and an origin on a localWrite are refused with invalidEvent; nothing is appended",
          arguments: [PushOrigin(source: "", eventID: "1"), PushOrigin(source: "s", eventID: ""), PushOrigin(source: "s\n", eventID: "1"),
                      PushOrigin(source: "s", eventID: "1\u{0}"), PushOrigin(source: "s", eventID: String(repeating: "9", count: 1_025))])
    func badOrigins(origin: PushOrigin) async throws {
        try await withTemporaryStore { store in
            do throws(StoreError) {
                try await store.push([.upsert(serverTodo(1, "a"))], to: "todos", origin: origin)
                Issue.record("accepted \(origin)")
            } catch {
                #expect(error.code == .invalidEvent)
            }
            do throws(StoreError) {
                try await store.append(.localWrite(.init([], origin: PushOrigin(source: "s", eventID: "1"))), to: "favourites")
                Issue.record("accepted a localWrite with an origin")
            } catch {
                #expect(error.code == .invalidEvent)
            }
            #expect(store.lastLSN == .zero)
        }
    }
}
