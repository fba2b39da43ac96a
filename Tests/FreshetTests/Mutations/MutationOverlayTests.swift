import Foundation
import Freshet
import FreshetHTTP
import FreshetTesting
import Testing

extension MutationTests {
    /// The pending overlay while a create is in flight: refetches underneath it, and the
    /// swap of the provisional row for the server's row on confirmation.
    @Suite("Pending overlay")
    struct Overlay {
        /// How many of the rows `tmp-1` and `201` a snapshot holds.
        static func createdCopies(_ snapshot: Snapshot) -> Int {
            snapshot.rows.filter { $0.id == "tmp-1" || $0.id == "201" }.count
        }

        @Test("a refetch landing while a create is pending shows the server's rows and tmp-1 once; confirmation swaps tmp-1 for 201")
        func refetchWhileCreatePending() async throws {
            let world = MutationWorld()
            let post = Gate()
            world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")])),
                               .json(todosJSON([(1, "one"), (2, "two"), (3, "three")])))
            world.transport.on(.post, "/todos", reply: .held(post, then: .json(todoJSON(201, "Buy milk"), status: 201)))
            try await world.withStore { store in
                try await store.refresh(todosResource)
                #expect(try store.ids("todos") == ["1", "2"])
                let watcher = recordSnapshots(store.observe("todos")) { $0.rows.contains { $0.id == "201" } }

                let pending = try await store.mutate(try createTodo("tmp-1", "Buy milk"))
                #expect(pending.id == mutationID(1))
                await post.waitUntilReached()
                #expect(try store.ids("todos") == ["1", "2", "tmp-1"])

                // The refetch lands while the POST is held: the server's three rows, not the new one.
                let summary = try await store.refresh(todosResource)
                #expect(summary.rows == 3)
                let during = try store.snapshot("todos")
                #expect(during.rows.map(\.id) == ["1", "2", "3", "tmp-1"])
                #expect(during.pendingMutations == [pending.id])

                post.release()
                let outcome = try await pending.outcome()
                #expect(outcome.serverID == "201")
                #expect(outcome.status == 201)
                let final = try store.snapshot("todos")
                #expect(final.rows.map(\.id) == ["1", "2", "3", "201"])
                #expect(final.rows.last == serverTodo(201, "Buy milk"))
                #expect(final.pendingMutations.isEmpty)

                let seen = try await watcher.value
                let sinceProposal = seen.filter { $0.lsn >= pending.lsn }
                #expect(!sinceProposal.isEmpty)
                for snapshot in sinceProposal {
                    #expect(Self.createdCopies(snapshot) == 1, "emission at LSN \(snapshot.lsn) holds \(snapshot.rows.map(\.id))")
                    #expect(Set(snapshot.rows.map(\.id)).count == snapshot.rows.count, "a row twice at LSN \(snapshot.lsn): \(snapshot.rows.map(\.id))")
                }
                #expect(seen.last?.rows.map(\.id) == ["1", "2", "3", "201"])
            }
        }

        /// The other order of the same race: the refetch was answered by the server before the
        /// POST was applied (so it lacks the new row) but reaches the store after the POST's
        /// confirmation. DESIGN.md: "No duplicate, no lost row."
        @Test("a refetch answered before the create but landing after its confirmation does not lose row 201")
        func staleRefetchLandingAfterConfirmation() async throws {
            let world = MutationWorld()
            let post = Gate()
            let refetch = Gate()
            world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")])),
                               .held(refetch, then: .json(todosJSON([(1, "one"), (2, "two"), (3, "three")]))))
            world.transport.on(.post, "/todos", reply: .held(post, then: .json(todoJSON(201, "Buy milk"), status: 201)))
            try await world.withStore { store in
                try await store.refresh(todosResource)
                let pending = try await store.mutate(try createTodo("tmp-1", "Buy milk"))
                await post.waitUntilReached()
                let watcher = recordSnapshots(store.observe("todos")) { snapshot in
                    // Ends with the emission of the refetch (the only one showing row 3).
                    snapshot.rows.contains { $0.id == "3" }
                }
                let refresh = Task { try await store.refresh(todosResource) }
                await refetch.waitUntilReached()

                post.release()
                let outcome = try await pending.outcome()
                #expect(outcome.serverID == "201")
                #expect(try store.ids("todos") == ["1", "2", "201"])

                refetch.release()
                _ = try await refresh.value
                let final = try store.snapshot("todos")
                #expect(Self.createdCopies(final) == 1, "after the stale refetch: \(final.rows.map(\.id))")
                #expect(final.rows.contains { $0.id == "201" })

                let seen = try await watcher.value
                for snapshot in seen where snapshot.lsn >= pending.lsn {
                    #expect(Self.createdCopies(snapshot) == 1, "emission at LSN \(snapshot.lsn) holds \(snapshot.rows.map(\.id))")
                }
            }
        }

        @Test("a confirmed delete stays deleted when a refetch answered before it lands afterwards")
        func staleRefetchAfterConfirmedDelete() async throws {
            let world = MutationWorld()
            let delete = Gate()
            let refetch = Gate()
            world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")])),
                               .held(refetch, then: .json(todosJSON([(1, "one"), (2, "two")]))))
            world.transport.on(.delete, "/todos/2", reply: .held(delete, then: .json("{}")))
            try await world.withStore { store in
                try await store.refresh(todosResource)
                let removal = Mutation(name: "deleteTodo", ops: [.delete(id: "2", in: "todos")], request: .init(method: .delete, path: "/todos/2"))
                let pending = try await store.mutate(removal)
                #expect(try store.ids("todos") == ["1"])
                await delete.waitUntilReached()
                let refresh = Task { try await store.refresh(todosResource) }
                await refetch.waitUntilReached()

                delete.release()
                let outcome = try await pending.outcome()
                #expect(outcome.status == 200)
                #expect(outcome.rows.isEmpty)
                #expect(try store.ids("todos") == ["1"])

                refetch.release()
                _ = try await refresh.value
                #expect(try store.ids("todos") == ["1"])
            }
        }

        @Test("a confirmed edit stays when a refetch answered before it, holding the old version, lands afterwards")
        func staleRefetchAfterConfirmedEdit() async throws {
            let world = MutationWorld()
            let patch = Gate()
            let refetch = Gate()
            world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")])),
                               .held(refetch, then: .json(todosJSON([(1, "one"), (2, "two")]))))
            world.transport.on(.patch, "/todos/2", reply: .held(patch, then: .json(todoJSON(2, "two, edited"))))
            try await world.withStore { store in
                try await store.refresh(todosResource)
                let edited = Row(id: "2", json: Data(todoJSON(2, "two, edited").utf8))
                let edit = Mutation(name: "editTodo", ops: [.upsert(edited, in: "todos")],
                                    request: .init(method: .patch, path: "/todos/2", body: Data(todoJSON(2, "two, edited").utf8)))
                let pending = try await store.mutate(edit)
                await patch.waitUntilReached()
                let refresh = Task { try await store.refresh(todosResource) }
                await refetch.waitUntilReached()

                patch.release()
                _ = try await pending.outcome()
                #expect(try store.snapshot("todos").rows.last == serverTodo(2, "two, edited"))

                // The refetch was answered before the PATCH: it must not bring "two" back.
                refetch.release()
                _ = try await refresh.value
                let final = try store.snapshot("todos")
                #expect(final.rows.map(\.id) == ["1", "2"])
                #expect(final.rows.last == serverTodo(2, "two, edited"))
            }
        }

        @Test("after a confirmation changes the stored rows, the next refresh is unconditional: no 304 can keep them")
        func confirmationDropsValidators() async throws {
            let world = MutationWorld()
            world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")]), headers: ["ETag": #""v1""#, "Last-Modified": "Sun, 29 Nov 2026 10:00:00 GMT"]))
            world.transport.on(.patch, "/todos/2", reply: .json(todoJSON(2, "two, edited")))
            try await world.withStore { store in
                try await store.refresh(todosResource)
                #expect(try store.snapshot("todos").syncMark?.etag == #""v1""#)
                let edited = Row(id: "2", json: Data(todoJSON(2, "two, edited").utf8))
                let edit = Mutation(name: "editTodo", ops: [.upsert(edited, in: "todos")],
                                    request: .init(method: .patch, path: "/todos/2", body: Data(todoJSON(2, "two, edited").utf8)))
                _ = try await store.mutate(edit).outcome()
                let mark = try #require(try store.snapshot("todos").syncMark)
                #expect(mark.etag == nil)
                #expect(mark.lastModified == nil)

                try await store.refresh(todosResource)
                let gets = world.transport.requests.filter { $0.request.method == .get }
                #expect(gets.count == 2)
                #expect(gets.last?.request.headers["If-None-Match"] == nil)
                #expect(gets.last?.request.headers["If-Modified-Since"] == nil)
            }
        }

        @Test("observers see exactly [1, 2], then [1, 2, tmp-1], then [1, 2, 201]; the confirmation maps tmp-1 to 201")
        func provisionalToServerID() async throws {
            let world = MutationWorld()
            let post = Gate()
            world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")])))
            world.transport.on(.post, "/todos", reply: .held(post, then: .json(todoJSON(201, "Buy milk"), status: 201)))
            try await world.withStore { store in
                try await store.refresh(todosResource)
                var emissions = store.observe("todos").makeAsyncIterator()

                let first = try #require(try await emissions.next())
                #expect(first.rows.map(\.id) == ["1", "2"])
                #expect(first.pendingMutations.isEmpty)

                let pending = try await store.mutate(try createTodo("tmp-1", "Buy milk"))
                let second = try #require(try await emissions.next())
                #expect(second.rows.map(\.id) == ["1", "2", "tmp-1"])
                #expect(second.pendingMutations == [pending.id])
                #expect(second.lsn == pending.lsn)

                await post.waitUntilReached()
                post.release()
                let third = try #require(try await emissions.next())
                #expect(third.rows.map(\.id) == ["1", "2", "201"])
                #expect(third.rows.last == serverTodo(201, "Buy milk"))
                #expect(third.pendingMutations.isEmpty)

                let outcome = try await pending.outcome()
                #expect(outcome.serverID == "201")
                #expect(outcome.status == 201)
                #expect(outcome.rows == [serverTodo(201, "Buy milk")])
                #expect(outcome.lsn == third.lsn)

                let events = try store.mutationEvents()
                #expect(events.count == 2)
                guard case .mutationConfirmed(let confirmed) = try #require(events.last).event else {
                    Issue.record("the last mutation event is not mutationConfirmed: \(events)")
                    return
                }
                #expect(confirmed.id == pending.id)
                #expect(confirmed.status == 201)
                #expect(confirmed.idMappings == [.init(collection: "todos", provisionalID: "tmp-1", serverID: "201")])
                #expect(confirmed.affected == ["todos"])
                #expect(confirmed.rows.map(\.collection) == ["todos"])
                #expect(confirmed.rows.map(\.row) == [serverTodo(201, "Buy milk")])

                // No emission after the third: closing ends the observation with nothing more.
                store.close()
                let rest = try await emissions.next()
                #expect(rest == nil, "an emission after the confirmation: \(rest.map { $0.rows.map(\.id) } ?? [])")
            }
        }
    }
}
