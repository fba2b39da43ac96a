import Foundation
@testable import Freshet
@testable import FreshetModels
import FreshetTesting
import Testing

extension ModelTests {
    /// Bad input: a model released while its refresh is in flight.
    @Suite("A model released mid-refresh: no crash, nothing lost, the refresh still committed")
    @MainActor
    struct ModelReleaseTests {
        @Test("the background refresh a model started lands after the model is gone")
        func backgroundRefreshOutlivesModel() async throws {
            try await withModelStore { h in
                let gate = Gate()
                h.transport.on("/items", reply: .held(gate, then: ItemsFixture.reply(["a", "b"])))
                var model: QueryModel<Item>? = QueryModel(.items(), store: h.store)
                weak let released = model
                await gate.waitUntilReached()   // observing the empty collection started a refresh
                let task = try #require(model?.observationTask)
                model = nil
                #expect(released == nil)
                await task.value
                #expect(h.store.hub.observerCount("items") == 0)
                gate.release()
                try await waitForRows(2, of: "items", in: h.store)
                #expect(try h.store.ids("items") == ["a", "b"])
                #expect(try h.store.allRecords(collection: "items").map(\.kind) == [.fetched])
            }
        }

        @Test("refresh() whose caller is cancelled returns cancelled at once; the model is then freed and the response still commits")
        func cancelledCallerReleasedModel() async throws {
            try await withModelStore { h in
                h.transport.on("/items", reply: ItemsFixture.reply(["a"]))
                try await h.store.refresh(ItemsFixture.resource(.maxAge(.seconds(300))))
                let gate = Gate()
                h.transport.on("/items", reply: .held(gate, then: ItemsFixture.reply(["a", "b"])))
                var model: QueryModel<Item>? = QueryModel(.items(), store: h.store)
                weak let released = model
                await waitUntil { model?.rows.count == 1 }
                // The task holds the model only while refresh() runs (as a view's .refreshable does).
                let refresh = Task { [weak model] in await model?.refresh() }
                await gate.waitUntilReached()
                model = nil
                refresh.cancel()
                let result = try #require(await refresh.value)
                #expect(result == .failure(FetchError(.cancelled, "the caller stopped waiting for the refresh of items; the request goes on and is committed", url: "/items")))
                // The call has returned: nothing holds the model any more.
                #expect(released == nil)
                gate.release()
                try await waitForRows(2, of: "items", in: h.store)
                #expect(try h.store.ids("items") == ["a", "b"])
            }
        }
    }
}

/// Returns once collection `collection` of `store` has `count` rows (observed, not polled).
func waitForRows(_ count: Int, of collection: String, in store: Store) async throws {
    for try await snapshot in store.observe(collection) where snapshot.rows.count >= count { return }
}
