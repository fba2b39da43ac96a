import Foundation
import Freshet
import FreshetHTTP
import FreshetTesting
import Testing

extension MutationTests {
    /// Only the server may reject a mutation. A reason on this side — no base URL, a request
    /// that cannot be built, no usable credentials, a token provider that throws, a store that
    /// does not send — keeps it pending, says why (``MutationWait``) and never appends
    /// `mutationRolledBack`.
    @Suite("Local reasons never reject")
    struct LocalReasons {
        /// The first snapshot of `collection` in which `id` waits for a reason, or has been
        /// resolved (then the test fails on the wait it reads).
        static func held(_ id: MutationID, in store: Store, collection: String = "todos") async throws -> Snapshot {
            let seen = recordSnapshots(store.observe(collection)) { $0.waitingMutations[id] != nil || !$0.pendingMutations.contains(id) }
            return try #require(try await seen.value.last)
        }

        /// The mutation events' kinds, in log order.
        static func mutationKinds(_ store: Store) throws -> [String] {
            try store.mutationEvents().map(\.event.kind.name)
        }

        @Test("a pending edit reopened with a Configuration without baseURL stays pending, unsent and not rolled back past an hour of TestClock; reopened with the baseURL it is sent once and confirmed")
        func noBaseURLKeepsThePendingEdit() async throws {
            try await withTemporaryDirectory { directory in
                // Launch 1: offline, with a base URL. The edit is proposed and stays pending.
                let offline = MutationWorld()
                offline.transport.on(where: { _ in true }, reply: .fail(.cannotConnect))
                let proposed: PendingMutation
                do {
                    let store = try Store(directory: directory, configuration: .test(), dependencies: offline.dependencies)
                    defer { store.close() }
                    store.register(todosResource)
                    proposed = try await store.mutate(editTodo("1", title: "Offline edit"))
                    await offline.transport.waitForRequests(1)
                }

                // Launch 2: a process whose Configuration has no base URL.
                do {
                    let world = MutationWorld()
                    let store = try Store(directory: directory, configuration: .test(baseURL: nil), dependencies: world.dependencies)
                    defer { store.close() }
                    let snapshot = try await Self.held(proposed.id, in: store)
                    let expected = MutationWait(.noBaseURL, #"PATCH "/todos/1" is a relative path and the configuration has no baseURL; it is sent once the store is opened with one"#, retry: .onTrigger)
                    #expect(snapshot.waitingMutations == [proposed.id: expected])
                    #expect(snapshot.pendingMutations == [proposed.id])
                    #expect(snapshot.rows.map(\.id) == ["1"])
                    #expect(try title("1", in: store) == "Offline edit")

                    // Well past any backoff: no timer is set, nothing is sent, nothing rolled back.
                    #expect(world.clock.sleeperCount == 0)
                    await world.clock.advance(by: .seconds(3600))
                    #expect(try Self.mutationKinds(store) == ["mutationProposed"])
                    let queued = try store.pendingMutations()
                    #expect(queued.map(\.id) == [proposed.id])
                    #expect(queued.first?.waiting == expected)
                    #expect(queued.first?.attempts == 1)
                    #expect(store.handle(for: try #require(queued.first)).waiting == expected)
                    #expect(world.transport.requests.isEmpty)
                }

                // Launch 3: the base URL is back; opening the store sends the edit.
                let world = MutationWorld()
                let answer = Gate()
                world.transport.on(.patch, "/todos/1", reply: .held(answer, then: .json(todoJSON(1, "Offline edit"))))
                let store = try Store(directory: directory, configuration: .test(), dependencies: world.dependencies)
                defer { store.close() }
                await answer.waitUntilReached()
                let queued = try #require(try store.pendingMutations().first)
                #expect(queued.id == proposed.id)
                answer.release()
                let outcome = try await store.handle(for: queued).outcome()
                #expect(outcome.status == 200)
                #expect(outcome.kind == .applied)
                #expect(outcome.rows == [serverTodo(1, "Offline edit")])
                #expect(try Self.mutationKinds(store) == ["mutationProposed", "mutationConfirmed"])
                #expect(world.requests(.patch).map { "\($0.url.absoluteString) \($0.headers["Idempotency-Key"] ?? "-")" }
                        == ["http://stub.invalid/todos/1 \(proposed.id)"])
                #expect(try store.snapshot("todos").rows == [serverTodo(1, "Offline edit")])
                #expect(try store.snapshot("todos").waitingMutations.isEmpty)
            }
        }

        @Test("a request path that makes no http(s) URL waits as invalidRequest; no request, no rollback")
        func unbuildableRequestWaits() async throws {
            let world = MutationWorld()
            try await world.withStore { store in
                store.register(todosResource)
                let row = Row(id: "tmp-1", json: sortedJSON(["id": "tmp-1", "title": "mail it"]))
                let pending = try await store.mutate(Mutation(name: "mailTodo", ops: [.upsert(row, in: "todos")],
                                                              request: .init(method: .post, path: "mailto:someone@example.com")))
                let snapshot = try await Self.held(pending.id, in: store)
                #expect(snapshot.waitingMutations[pending.id] == MutationWait(.invalidRequest, #"POST "mailto:someone@example.com" does not make an http(s) URL against http://stub.invalid"#, retry: .onTrigger))
                #expect(snapshot.rows == [row])
                await world.clock.advance(by: .seconds(3600))
                #expect(try Self.mutationKinds(store) == ["mutationProposed"])
                #expect(world.transport.requests.isEmpty)
            }
        }

        @Test("a 401 with no token provider waits as unauthorized, with no timer; sendPendingMutations() sends it again with the same Idempotency-Key and it is confirmed")
        func unauthorizedWaitsForATrigger() async throws {
            let world = MutationWorld()
            world.transport.on(.patch, "/todos/1", reply: .status(401), .json(todoJSON(1, "New title")))
            try await world.withStore { store in
                store.register(todosResource)
                let pending = try await store.mutate(editTodo("1", title: "New title"))
                let snapshot = try await Self.held(pending.id, in: store)
                let expected = MutationWait(.unauthorized, "PATCH http://stub.invalid/todos/1 answered 401; no token provider is configured (Configuration.authentication)", retry: .onTrigger)
                #expect(snapshot.waitingMutations == [pending.id: expected])
                #expect(pending.waiting == expected)
                #expect(world.clock.sleeperCount == 0)
                await world.clock.advance(by: .seconds(3600))
                #expect(world.requests(.patch).count == 1)
                #expect(try Self.mutationKinds(store) == ["mutationProposed"])

                store.sendPendingMutations()
                let outcome = try await pending.outcome()
                #expect(outcome.status == 200)
                #expect(pending.waiting == nil)
                #expect(world.requests(.patch).map { $0.headers["Idempotency-Key"] } == [pending.id.description, pending.id.description])
                #expect(try Self.mutationKinds(store) == ["mutationProposed", "mutationConfirmed"])
                #expect(try store.snapshot("todos").waitingMutations.isEmpty)
            }
        }

        @Test("a token provider that throws keeps the edit pending as retrying after the backoff; nothing is sent or rolled back")
        func failingTokenProviderRetries() async throws {
            struct SignedOut: Error, CustomStringConvertible { var description: String { "signed out" } }
            let world = MutationWorld()
            try await world.withStore(configure: { configuration in
                configuration.authentication = .init(token: { throw SignedOut() }, refresh: {})
            }) { store in
                store.register(todosResource)
                let pending = try await store.mutate(editTodo("1", title: "New title"))
                let snapshot = try await Self.held(pending.id, in: store)
                let backoff = Configuration.RetryPolicy().delay(afterAttempt: 1, random: SeededRandom.source(seed: 0).unitInterval())
                #expect(snapshot.waitingMutations[pending.id] == MutationWait(.retrying, "the token provider failed: signed out", retry: .after(backoff)))
                await world.clock.waitForSleepers(1)
                #expect(try Self.mutationKinds(store) == ["mutationProposed"])
                #expect(world.transport.requests.isEmpty)
            }
        }

        @Test("a store opened read-only shows its pending mutation as notSending, sends nothing and appends nothing")
        func readOnlyStoreDoesNotSend() async throws {
            try await withTemporaryDirectory { directory in
                let offline = MutationWorld()
                offline.transport.on(where: { _ in true }, reply: .fail(.cannotConnect))
                let proposed: PendingMutation
                do {
                    let store = try Store(directory: directory, configuration: .test(), dependencies: offline.dependencies)
                    defer { store.close() }
                    store.register(todosResource)
                    proposed = try await store.mutate(editTodo("1", title: "Offline edit"))
                    await offline.transport.waitForRequests(1)
                }
                let world = MutationWorld()
                let store = try Store(directory: directory, configuration: .test(baseURL: nil), dependencies: world.dependencies, create: false)
                defer { store.close() }
                let snapshot = try store.snapshot("todos")
                #expect(snapshot.pendingMutations == [proposed.id])
                #expect(snapshot.waitingMutations[proposed.id]?.code == .notSending)
                #expect(try store.pendingMutations().first?.waiting?.code == .notSending)
                store.sendPendingMutations()
                await world.clock.advance(by: .seconds(3600))
                #expect(world.transport.requests.isEmpty)
                #expect(try Self.mutationKinds(store) == ["mutationProposed"])
            }
        }
    }
}
