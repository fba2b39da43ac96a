import Foundation
import FreshetTesting
import Testing
import TestSupport
@testable import Freshet

/// Issue 7 item 3: two processes (an app and its extension, two CLI runs) write one store.
/// Each takes its next LSN inside its write transaction; observers in one process hear of the
/// other's commits on their next commit or on `checkForExternalChanges()`.
@Suite("Several processes writing one store")
struct MultiProcessWriterTests {
    /// Starts one `append` helper per collection, lets them all go at once, and waits until
    /// each has appended `count` events and exited 0.
    static func appendConcurrently(_ collections: [String], count: Int, to directory: URL) async throws {
        var writers: [StoreHelper] = []
        do {
            for collection in collections {
                let writer = try await StoreHelper(["append", directory.path, collection, String(count)])
                writers.append(writer)
                #expect(try await writer.nextLine() == "ready")
            }
            for writer in writers { try writer.send("go") }
            for writer in writers {
                let done = try await writer.nextLine()
                #expect(done.hasPrefix("done "), "\(done)")
                #expect(await writer.waitForExit() == 0)
            }
        } catch {
            for writer in writers { await writer.kill() }
            throw error
        }
    }

    @Test("two processes appending at once while a third has the store open: LSNs 1 ... 401 without gaps, both processes' events in their order, and the third appends LSN 402")
    func twoWriterProcesses() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            defer { store.close() }
            #expect(try await store.localWrite("app", [.upsert(row("start"))]) == 1)
            var observed = store.observe("a").makeAsyncIterator()
            #expect(try await observed.next()?.rows.count == 0)

            try await Self.appendConcurrently(["a", "b"], count: 200, to: directory)

            // This process has not looked yet; the cheap check finds both collections.
            #expect(store.lastLSN == 1)
            #expect(try store.checkForExternalChanges() == ["a", "b"])
            #expect(store.lastLSN == 401)
            #expect(try store.checkForExternalChanges() == [])
            let seen = try #require(try await observed.next())
            #expect(seen.rows.count == 200)
            #expect(seen.lsn > 1)

            let records = try store.allRecords()
            #expect(records.map(\.lsn) == (1...401).map { LSN(UInt64($0)) })
            for collection in ["a", "b"] {
                let ids = records.filter { $0.collection == collection }.flatMap { record -> [String] in
                    guard case .localWrite(let changes) = record.event else { return [] }
                    return changes.ops.compactMap { if case .upsert(let r) = $0 { r.id } else { nil } }
                }
                #expect(ids == (0..<200).map { "\(collection)-\($0)" })
                #expect(try store.ids(collection) == (0..<200).map { "\(collection)-\($0)" })
            }
            // The next LSN comes from the store, not from this process's memory.
            #expect(try await store.localWrite("app", [.upsert(row("after"))]) == 402)
        }
    }

    @Test("an observer hears of another process's commit when its own process next commits")
    func observerLearnsOnNextCommit() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            defer { store.close() }
            var observed = store.observe("b").makeAsyncIterator()
            #expect(try await observed.next()?.rows.count == 0)

            try await Self.appendConcurrently(["b"], count: 3, to: directory)

            // A commit to another collection: the write transaction finds LSNs 1 ... 3 from the
            // other process and announces "b" with its own "app".
            #expect(try await store.localWrite("app", [.upsert(row("x"))]) == 4)
            let seen = try #require(try await observed.next())
            #expect(seen.rows.map(\.id) == ["b-0", "b-1", "b-2"])
            #expect(store.lastLSN == 4)
            #expect(try store.checkForExternalChanges() == [])
        }
    }

    @Test("a store opened by another process after this one: both append in turns and the log has no gaps")
    func alternatingWriters() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            defer { store.close() }
            for round in 0..<3 {
                try await Self.appendConcurrently(["other"], count: 2, to: directory)
                #expect(try await store.localWrite("mine", [.upsert(row("r\(round)"))]) == LSN(UInt64(3 * round + 3)))
            }
            #expect(try store.allRecords().map(\.lsn.rawValue) == Array(1...9))
            #expect(try store.ids("mine") == ["r0", "r1", "r2"])
            #expect(try store.ids("other") == ["other-0", "other-1"])
        }
    }

    @Test("with externalChangeCheckInterval set, an observer hears of another process's commits when the interval passes, with no commit or call here")
    func pollingFindsExternalChanges() async throws {
        try await withTemporaryDirectory { directory in
            let clock = FreshetTesting.TestClock()
            var configuration = Configuration.test()
            configuration.externalChangeCheckInterval = .seconds(2)
            let dependencies = Dependencies(now: clock.dateSource, clock: clock, random: .zero, transport: StubTransport.offline)
            let store = try Store(directory: directory, configuration: configuration, dependencies: dependencies)
            defer { store.close() }
            var observed = store.observe("b").makeAsyncIterator()
            #expect(try await observed.next()?.rows.count == 0)

            try await Self.appendConcurrently(["b"], count: 3, to: directory)
            #expect(store.lastLSN == .zero)
            await clock.waitForSleepers(1)
            await clock.advance(by: .seconds(2))
            let seen = try #require(try await observed.next())
            #expect(seen.rows.map(\.id) == ["b-0", "b-1", "b-2"])
            #expect(store.lastLSN == 3)
        }
    }

    @Test("a mutation another process has confirmed cannot be confirmed again here: the fold refuses it inside the write transaction, the server row is applied once, and observers see the other process's confirmation")
    func confirmationFromBothProcesses() async throws {
        try await withTemporaryDirectory { directory in
            var configuration = Configuration.test()
            configuration.sendsMutations = false
            let store = try Store(directory: directory, configuration: configuration, dependencies: .test())
            defer { store.close() }
            let id = MutationID(rawValue: UUID(uuidString: "00000000-0000-0000-0000-00000000000A") ?? UUID())
            let mutation = Mutation(name: "editTodo", ops: [.upsert(row("1", "local edit"), in: "todos")], request: .init(method: .put, path: "/todos/1"))
            #expect(try await store.append(.mutationProposed(Event.MutationProposed(id: id, mutation: mutation)), to: "todos") == 1)
            var observed = store.observe("todos").makeAsyncIterator()
            #expect(try await observed.next()?.pendingMutations == [id])

            // The extension got the server's answer first.
            let other = try await StoreHelper(["confirm", directory.path, id.description, "todos", "1"])
            let line = try await other.nextLine()
            #expect(line == "confirmed 2")
            #expect(await other.waitForExit() == 0)

            // This process's answer for the same mutation arrives second.
            let mine = Event.MutationConfirmed(id: id, status: 200, rows: [("todos", Row(id: "1", json: Data(#"{"by":"app"}"#.utf8)))], affected: ["todos"])
            let error = await #expect(throws: StoreError.self) {
                try await store.append(.mutationConfirmed(mine), to: "todos")
            }
            #expect(error?.code == .invalidEvent)
            #expect(error?.message == "mutationConfirmed for mutation \(id), which is already confirmed")
            #expect(store.lastLSN == 2)
            #expect(try store.allRecords().map(\.kind) == [.mutationProposed, .mutationConfirmed])
            #expect(try store.pendingMutations().isEmpty)
            let rows = try store.snapshot("todos").rows
            #expect(rows == [Row(id: "1", json: Data(#"{"by":"helper"}"#.utf8))])
            // The failed commit still told this process's observers of the other one's commit.
            let seen = try #require(try await observed.next())
            #expect(seen.pendingMutations == [])
            #expect(seen.rows == rows)
        }
    }
    @Test("a mutation this process is sending that another process confirms first: this process's outcome is the stored confirmation, and its queue goes on to the next mutation")
    func confirmationArrivingSecondResolvesFromTheLog() async throws {
        let world = MutationWorld()
        let put = Gate()
        world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")])))
        world.transport.on(.put, "/todos/1", reply: .held(put, then: .json(#"{"id":1,"by":"app"}"#)))
        world.transport.on(.put, "/todos/2", reply: .json(#"{"id":2,"by":"app"}"#))
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: .test(), dependencies: world.dependencies)
            defer { store.close() }
            func edit(_ id: String) -> Mutation {
                Mutation(name: "editTodo", ops: [.upsert(row(id, "local edit"), in: "todos")], request: .init(method: .put, path: "/todos/\(id)"),
                         confirmation: .responseRow(collection: "todos", provisionalID: id, idField: "id"))
            }
            try await store.refresh(todosResource)
            let first = try await store.mutate(edit("1"))
            let second = try await store.mutate(edit("2"))
            await put.waitUntilReached()

            // The extension got the server's answer to the first edit first.
            let other = try await StoreHelper(["confirm", directory.path, first.id.description, "todos", "1"])
            #expect(try await other.nextLine() == "confirmed 4")
            #expect(await other.waitForExit() == 0)

            put.release()
            let outcome = try await first.outcome()
            #expect(outcome == MutationOutcome(id: first.id, status: 200, kind: .applied, rows: [Row(id: "1", json: Data(#"{"by":"helper"}"#.utf8))], serverID: nil, lsn: 4))
            #expect(outcome.rows == [Row(id: "1", json: Data(#"{"by":"helper"}"#.utf8))])
            #expect(outcome.status == 200)
            let next = try await second.outcome()
            #expect(next.lsn == 5)
            #expect(world.requests(.put).map(\.url.path) == ["/todos/1", "/todos/2"])
            #expect(try store.pendingMutations().isEmpty)
            #expect(try store.allRecords().map(\.kind) == [.fetched, .mutationProposed, .mutationProposed, .mutationConfirmed, .mutationConfirmed])
        }
    }
    @Test("a store another process keeps growing opens as sound every time: the damage check reads the file's size after the meta page, not before")
    func openWhileAnotherProcessGrowsTheFile() async throws {
        try await offPool {
            try await withTemporaryDirectory { directory in
                let writer = try await StoreHelper(["fill", directory.path, "none"])
                // About 8 MB of 8 KB rows first, so each check walks long enough to span commits.
                for _ in 0..<1000 { _ = try await writer.nextLine() }
                var configuration = Configuration.test()
                configuration.sendsMutations = false
                var failures: [String] = []
                for _ in 0..<20 {
                    do {
                        let store = try Store(directory: directory, configuration: configuration, dependencies: .test(), create: false)
                        store.close()
                    } catch {
                        failures.append("\(error)")
                    }
                    _ = try await writer.nextLine()
                }
                _ = await writer.kill()
                #expect(failures == [])
            }
        }
    }
}
