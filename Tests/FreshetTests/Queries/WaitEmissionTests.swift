import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Testing
import TestSupport

/// Trial finding (issue 10): offline with a pending mutation, an observer got a snapshot per
/// retry because only the ``MutationWait``'s backoff delay changed. The delay is not
/// something a view shows as news; why the mutation waits is.
@Suite("Emissions: a mutation's retry time alone emits nothing", .scaledTimeLimit(minutes: 1))
struct WaitEmissionTests {
    @Test("offline retries of a pending edit with growing backoff emit one snapshot for the wait, none per retry; the snapshot read carries the current delay")
    func retryTicksDoNotEmit() async throws {
        let world = MutationWorld()
        world.transport.on(where: { _ in true }, reply: .fail(.cannotConnect))
        try await world.withStore { store in
            store.register(todosResource)
            let pending = try await store.mutate(editTodo("1", title: "Offline edit"))
            var observer = store.observe("todos").makeAsyncIterator()
            var snapshot = try #require(try await observer.next())
            while snapshot.waitingMutations[pending.id] == nil { snapshot = try #require(try await observer.next()) }
            let firstWait = try #require(snapshot.waitingMutations[pending.id])
            #expect(firstWait.code == .retrying)
            let before = store.hub.emissionCount()
            // Four more attempts, each with a longer backoff.
            for attempt in 2...5 {
                await world.clock.waitForSleepers(1)
                let deadline = try #require(world.clock.nextDeadline)
                await world.clock.advance(to: deadline)
                await world.transport.waitForRequests(attempt)
            }
            await world.clock.waitForSleepers(1)
            #expect(world.transport.requests.count == 5)
            #expect(store.hub.emissionCount() == before)
            let current = try #require(try store.snapshot("todos").waitingMutations[pending.id])
            #expect(current.showsSame(as: firstWait))
            #expect(current != firstWait, "the delay grew: \(firstWait.retry) → \(current.retry)")
        }
    }

    @Test("a wait whose reason changes is news: showsSame compares code, message and timer-or-trigger, not the delay")
    func showsSameRule() {
        let a = MutationWait(.retrying, "PATCH /todos/1 failed", retry: .after(.seconds(1)))
        #expect(a.showsSame(as: MutationWait(.retrying, "PATCH /todos/1 failed", retry: .after(.seconds(8)))))
        #expect(!a.showsSame(as: MutationWait(.retrying, "PATCH /todos/1 failed", retry: .onTrigger)))
        #expect(!a.showsSame(as: MutationWait(.unauthorized, "PATCH /todos/1 failed", retry: .after(.seconds(1)))))
        #expect(!a.showsSame(as: MutationWait(.retrying, "PATCH /todos/1 answered 503", retry: .after(.seconds(1)))))
    }
}
