import Foundation
@testable import Freshet
@testable import FreshetModels
import FreshetTesting
import Testing

/// `Item` as the old app version stored it.
private struct OldItem: Decodable {
    var id: String
    var v: String
}

extension ModelTests {
    /// Issue 11 item 4: rows stored by an older app version that no longer decode.
    @Suite("Schema drift: partial rows, a typed error, one invalidation and refetch")
    @MainActor
    struct SchemaDriftTests {
        /// Row `b` in the old shape: `v` was a string.
        static let oldShape = #"[{"id":"a","v":1},{"id":"b","v":"one"}]"#
        static let newShape = #"[{"id":"a","v":1},{"id":"b","v":1}]"#

        /// The `invalidated` events of `items`, as (LSN, reason).
        static func invalidations(_ store: Store) throws -> [(LSN, String?)] {
            try store.allRecords(collection: "items").compactMap { record in
                if case .invalidated(let i) = record.event { (record.lsn, i.reason) } else { nil }
            }
        }

        @Test("an old-shape row yields the rows that decode, a RowDecodingError naming it, an invalidation and a refetch that heals it")
        func partialListThenRefetch() async throws {
            try await withModelStore { h in
                let gate = Gate()
                h.transport.on("/items", reply: .json(Self.oldShape), .held(gate, then: .json(Self.newShape)))
                try await h.store.refresh(ItemsFixture.resource(.maxAge(.seconds(300))))   // stored by "the old app"
                let model = QueryModel(.items(), store: h.store)
                await waitUntil { !model.decodingErrors.isEmpty }
                #expect(model.rows == [IdentifiedRow(id: "a", value: Item(id: "a", v: 1))])
                #expect(model.decodingErrors == [RowDecodingError(collection: "items", rowID: "b", codingPath: "v", type: "Item",
                                                                  reason: "Expected to decode Int but found a string instead.")])
                #expect(model.decodingErrors.first?.description == #"row "b" of items does not decode as Item at v: Expected to decode Int but found a string instead."#)
                // The collection was marked stale, with the reason in the log, and is being refetched.
                await gate.waitUntilReached()
                #expect(model.driftInvalidation == 2)
                #expect(try Self.invalidations(h.store).map(\.0) == [2])
                #expect(try Self.invalidations(h.store).first?.1 == #"row "b" of items does not decode as Item (schema drift)"#)
                gate.release()
                await waitUntil { model.rows.count == 2 }
                #expect(model.decodingErrors.isEmpty)
                #expect(model.rows.map(\.value) == [Item(id: "a", v: 1), Item(id: "b", v: 1)])
                await waitUntil { !model.isFetching && !model.state.isStale }
                #expect(h.transport.requests.count == 2)
            }
        }

        @Test("when the refetched rows still fail, the model keeps the partial list and the error and refetches no more")
        func noRefetchLoop() async throws {
            try await withModelStore { h in
                let gate = Gate()
                h.transport.on("/items", reply: .json(Self.oldShape), .held(gate, then: .json(Self.oldShape)), .json(Self.oldShape))
                try await h.store.refresh(ItemsFixture.resource(.maxAge(.seconds(300))))
                let decodes = Counter()
                let model = QueryModel(.items(counting: decodes), store: h.store)
                await waitUntil { model.driftInvalidation != nil }
                // The refetch (request 2) answers the same bytes 10 s later: fetched, fresh, still failing.
                await gate.waitUntilReached()
                await h.clock.advance(by: .seconds(10))
                gate.release()
                await waitUntil { model.state.dataUpdatedAt == h.date(10) && !model.isFetching }
                #expect(!model.state.isStale)
                #expect(model.lsn == 3)
                #expect(model.rows.map(\.id) == ["a"])
                #expect(model.decodingErrors.map(\.rowID) == ["b"])
                #expect(h.transport.requests.count == 2)
                #expect(try Self.invalidations(h.store).count == 1)
                #expect(decodes.count == 2)   // the unchanged failing row was not decoded again
                // A later refresh (pull to refresh) fetches as usual, and still invalidates nothing.
                _ = try await model.refresh().get()
                #expect(h.transport.requests.count == 3)
                #expect(try Self.invalidations(h.store).count == 1)
            }
        }

        @Test("an upgrade closure reads the old shape: every row shows, no error, no invalidation")
        func upgradeClosure() async throws {
            try await withModelStore { h in
                h.transport.on("/items", reply: .json(Self.oldShape))
                try await h.store.refresh(ItemsFixture.resource(.maxAge(.seconds(300))))
                let model = QueryModel(.items(upgrade: { row in
                    let old = try RowDecoder().decode(OldItem.self, from: row.json)
                    return Item(id: old.id, v: old.v == "one" ? 1 : 0)
                }), store: h.store)
                await waitUntil { model.rows.count == 2 }
                #expect(model.rows.map(\.value) == [Item(id: "a", v: 1), Item(id: "b", v: 1)])
                #expect(model.decodingErrors.isEmpty)
                #expect(model.driftInvalidation == nil)
                #expect(try Self.invalidations(h.store).isEmpty)
                #expect(h.transport.requests.count == 1)
            }
        }

        @Test("a row that is not even an object of the type reports its own path and the others still show")
        func badRowAmongGood() async throws {
            try await withModelStore { h in
                h.transport.on("/items", reply: .json(#"[{"id":"a","v":1},{"id":"b"},{"id":"c","v":{"n":3}},{"id":"d","v":4}]"#))
                try await h.store.refresh(ItemsFixture.resource(.maxAge(.seconds(300))))
                let model = QueryModel(.items(), store: h.store)
                await waitUntil { model.decodingErrors.count == 2 }
                #expect(model.rows.map(\.id) == ["a", "d"])
                #expect(model.decodingErrors.map(\.rowID) == ["b", "c"])
                #expect(model.decodingErrors.map(\.codingPath) == ["v", "v"])
                #expect(model.observationError == nil)
            }
        }
    }
}
