import Foundation
@testable import Freshet
@testable import FreshetModels
import FreshetTesting
import Observation
import Testing

extension ModelTests {
    /// docs/swiftui.md's declarations against a scripted JSONPlaceholder-style server.
    @Suite("MutationModel: an optimistic toggle with pending, success and error states")
    @MainActor
    struct MutationModelTests {
        static let todosJSON = #"[{"completed":false,"id":1,"title":"Buy milk"},{"completed":true,"id":2,"title":"Walk"}]"#

        @Test("mutate shows the toggled row in the query model at once, pending; the server's 200 makes it success")
        func optimisticToggle() async throws {
            try await withModelStore { h in
                let patch = Gate()
                h.transport.on("/todos", reply: .json(Self.todosJSON))
                h.transport.on(.patch, "/todos/1", reply: .held(patch, then: .json(#"{"completed":true,"id":1,"title":"Buy milk"}"#)))
                let todos = QueryModel(Queries.todos, store: h.store)
                await waitUntil { todos.rows.count == 2 }
                let toggle = MutationModel(Mutations.toggle, store: h.store)
                #expect(toggle.status == .idle)
                toggle.mutate(todos.rows[0].value)
                #expect(toggle.status == .pending)
                #expect(toggle.variables == Todo(id: 1, title: "Buy milk", completed: false))
                await waitUntil { todos.rows.first?.value.completed == true }
                #expect(todos.pendingMutations.count == 1)
                // The model learns the ID when `store.mutate` returns, which may come after the
                // query model's snapshot showing the pending row (failed 1 in 8 under ASan).
                await waitUntil { toggle.mutationID != nil }
                #expect(toggle.mutationID == todos.pendingMutations.first)
                await patch.waitUntilReached()
                #expect(toggle.isPending)
                patch.release()
                await waitUntil { toggle.status != .pending }
                #expect(toggle.status == .success)
                #expect(toggle.outcome?.status == 200)
                #expect(toggle.error == nil)
                await waitUntil { todos.pendingMutations.isEmpty }
                #expect(todos.rows.map(\.value.completed) == [true, true])
                let body = try #require(h.transport.requests.last?.request.body)
                #expect(String(decoding: body, as: UTF8.self) == #"{"completed":true}"#)
            }
        }

        @Test("a 422 rolls the toggle back: error state with the rejection, the row as the server has it")
        func rejectedToggle() async throws {
            try await withModelStore { h in
                h.transport.on("/todos", reply: .json(Self.todosJSON))
                h.transport.on(.patch, "/todos/2", reply: .json(#"{"error":"locked"}"#, status: 422))
                let todos = QueryModel(Queries.todos, store: h.store)
                await waitUntil { todos.rows.count == 2 }
                let toggle = MutationModel(Mutations.toggle, store: h.store)
                await #expect(throws: MutationError.self) { try await toggle.mutateAsync(todos.rows[1].value) }
                await waitUntil { toggle.status == .error }
                #expect(toggle.error?.code == .rejected)
                #expect(toggle.error?.status == 422)
                await waitUntil { todos.pendingMutations.isEmpty }
                #expect(todos.rows.map(\.value.completed) == [false, true])
                toggle.reset()
                #expect(toggle.status == .idle && toggle.error == nil && toggle.variables == nil)
            }
        }

        @Test("an input the request cannot be built from is an invalidMutation error and appends nothing")
        func unbuildableInput() async throws {
            try await withModelStore { h in
                struct Refused: Error {}
                let broken = MutationDefinition<Int>("broken", request: { _ in throw Refused() })
                let model = MutationModel(broken, store: h.store)
                model.mutate(7)
                await waitUntil { model.status == .error }
                #expect(model.error?.code == .invalidMutation)
                #expect(model.error?.message == "broken: cannot build the mutation: Refused()")
                #expect(h.store.lastLSN == 0)
            }
        }

        @Test("the doc's render and toggleAndWait examples run: titles shown, the toggle confirmed")
        func docExamples() async throws {
            try await withModelStore { h in
                h.transport.on("/todos", reply: .json(Self.todosJSON))
                h.transport.on(.patch, "/todos/1", reply: .json(#"{"completed":true,"id":1,"title":"Buy milk"}"#))
                let todos = QueryModel(Queries.todos, store: h.store)
                let shown = Shown()
                SwiftUIDocCode.render(todos) { shown.titles = $0 }
                await waitUntil { shown.titles.count == 2 }
                #expect(shown.titles == ["Buy milk", "Walk"])
                let confirmed = try await SwiftUIDocCode.toggleAndWait(todos.rows[0].value, store: h.store)
                #expect(confirmed)
            }
        }
    }
}

/// What the render example showed last.
@MainActor
@Observable
final class Shown {
    var titles: [String] = []
}
