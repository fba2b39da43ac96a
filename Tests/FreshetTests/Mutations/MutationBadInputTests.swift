import Foundation
import Freshet
import FreshetHTTP
import FreshetTesting
import Testing

extension MutationTests {
    /// Mutations that cannot be proposed, and server answers that cannot be folded.
    @Suite("Bad input")
    struct BadInput {
        @Test("a mutation on an unknown collection throws unknownCollection and appends nothing")
        func unknownCollection() async throws {
            let world = MutationWorld()
            world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")])))
            try await world.withStore { store in
                try await store.refresh(todosResource)
                let lastLSN = store.lastLSN
                let typo = Mutation(name: "createTodo", ops: [.upsert(Row(id: "tmp-1", json: Data("{}".utf8)), in: "todo")],
                                    request: .init(method: .post, path: "/todos", body: Data("{}".utf8)))
                do throws(MutationError) {
                    let pending = try await store.mutate(typo)
                    Issue.record("proposed as \(pending.id)")
                } catch {
                    #expect(error.code == .unknownCollection)
                    #expect(error.message.contains(#""todo""#), "message: \(error.message)")
                }
                #expect(store.lastLSN == lastLSN)
                #expect(try store.collections() == ["todos"])
                #expect(try store.pendingMutations().isEmpty)
                #expect(world.transport.requests.map(\.description) == ["GET /todos"])
            }
        }

        @Test("a 2xx answer without a usable row: outcome throws malformedConfirmation, nothing pending, the collection invalidated",
              arguments: ["not json", #"{"title":"Buy milk","completed":false}"#, #"[{"id":201}]"#])
        func malformedConfirmation(body: String) async throws {
            let world = MutationWorld()
            world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")])))
            world.transport.on(.post, "/todos", reply: .json(body, status: 201))
            try await world.withStore { store in
                try await store.refresh(todosResource)
                let pending = try await store.mutate(try createTodo("tmp-1", "Buy milk"))
                let error = try #require(await settle(pending).error)
                #expect(error.code == .malformedConfirmation)
                #expect(error.status == 201)
                #expect(error.mutationID == pending.id)

                #expect(try store.pendingMutations().isEmpty)
                let snapshot = try store.snapshot("todos")
                #expect(snapshot.rows.map(\.id) == ["1", "2"])
                #expect(snapshot.pendingMutations.isEmpty)
                #expect(snapshot.status == .stale)
                let mark = try #require(snapshot.syncMark)
                #expect(mark.invalidatedAt == world.clock.date)

                let events = try store.mutationEvents()
                guard case .mutationConfirmed(let confirmed) = try #require(events.last).event else {
                    Issue.record("the last mutation event is not mutationConfirmed: \(events)")
                    return
                }
                #expect(confirmed.rows.isEmpty)
                #expect(confirmed.idMappings.isEmpty)
                #expect(confirmed.invalidates == ["todos"])
                #expect(mark.invalidatedLSN == events.last?.lsn)
                // Accepted by the server: never sent again.
                #expect(world.requests(.post).count == 1)
            }
        }

        @Test("a mutation ID proposed twice throws invalidMutation; the queue, the projection and the log are unchanged")
        func reusedMutationID() async throws {
            let world = MutationWorld()
            world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")])))
            world.transport.on(.post, "/todos", reply: .fail(.cannotConnect))
            try await world.withStore { store in
                try await store.refresh(todosResource)
                let id = MutationID(try #require(UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")))
                let first = try await store.propose(try createTodo("tmp-1", "Buy milk"), id: id)
                #expect(first.id == id)
                let before = try store.snapshot("todos")
                let lastLSN = store.lastLSN

                let again = try createTodo("tmp-2", "Buy bread")
                do throws(MutationError) {
                    let second = try await store.propose(again, id: id)
                    Issue.record("proposed again as \(second.id) at LSN \(second.lsn)")
                } catch {
                    #expect(error.code == .invalidMutation)
                    #expect(error.mutationID == id)
                }
                #expect(store.lastLSN == lastLSN)
                #expect(try store.pendingMutations().map(\.id) == [id])
                let after = try store.snapshot("todos")
                #expect(after.rows == before.rows)
                #expect(after.rows.map(\.id) == ["1", "2", "tmp-1"])
                #expect(after.pendingMutations == [id])
                #expect(try store.mutationEvents().count == 1)
            }
        }

        @Test("the ID of a confirmed mutation cannot be proposed again")
        func reusedConfirmedMutationID() async throws {
            let world = MutationWorld()
            world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")])))
            world.transport.on(.post, "/todos", reply: .json(todoJSON(201, "Buy milk"), status: 201))
            try await world.withStore { store in
                try await store.refresh(todosResource)
                let first = try await store.mutate(try createTodo("tmp-1", "Buy milk"))
                _ = try await first.outcome()
                let lastLSN = store.lastLSN

                let again = try createTodo("tmp-2", "Buy bread")
                do throws(MutationError) {
                    let second = try await store.propose(again, id: first.id)
                    Issue.record("proposed again as \(second.id) at LSN \(second.lsn)")
                } catch {
                    #expect(error.code == .invalidMutation)
                }
                #expect(store.lastLSN == lastLSN)
                #expect(try store.pendingMutations().isEmpty)
                #expect(try store.ids("todos") == ["1", "2", "201"])
                #expect(world.requests(.post).count == 1)
            }
        }
    }
}
