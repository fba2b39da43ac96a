import Foundation
@testable import Freshet
@testable import FreshetModels
import FreshetTesting
import Observation
import Testing

/// A scripted PokeAPI list on `https://api.test`: `count` pokemon named `mon1`, `mon2`, …, 20 a
/// page, each page naming the next in `next` as PokeAPI does (`?offset=20&limit=20`).
enum DexFixture {
    static let perPage = 20

    /// The page starting after `offset` rows, as PokeAPI writes it.
    static func body(offset: Int, of count: Int) -> String {
        let end = min(offset + perPage, count)
        let next = end < count ? #""https://api.test/api/v2/pokemon/?offset=\#(end)&limit=20""# : "null"
        let results = (offset + 1...end).map { #"{"name":"mon\#($0)","url":"https://api.test/api/v2/pokemon/\#($0)/"}"# }
        return #"{"count":\#(count),"next":\#(next),"previous":null,"results":[\#(results.joined(separator: ","))]}"#
    }

    /// The request target of the page starting after `offset` rows.
    static func target(offset: Int) -> String {
        offset == 0 ? "/api/v2/pokemon/?limit=20" : "/api/v2/pokemon/?offset=\(offset)&limit=20"
    }

    /// The page offsets of a list of `count`: 0, 20, 40, …
    static func offsets(_ count: Int) -> [Int] {
        Array(stride(from: 0, to: count, by: perPage))
    }

    /// Scripts every page of a list of `count`: `200` with an ETag, then `304`s — except the
    /// offsets in `replies`, which get those replies instead.
    static func script(_ h: ScriptedStore, count: Int, replies: [Int: [ScriptedTransport.Reply]] = [:]) {
        for offset in offsets(count) {
            let etag = #""page\#(offset)""#
            let page = replies[offset] ?? [.json(body(offset: offset, of: count), headers: ["ETag": etag]), .status(304, headers: ["ETag": etag])]
            h.transport.on(target(offset: offset), replies: page)
        }
    }

    /// `mon1` … `mon<count>`.
    static func names(_ range: ClosedRange<Int>) -> [String] {
        range.map { "mon\($0)" }
    }
}

extension InfiniteQueryDefinition where Value == PokemonRow {
    /// The scripted Pokédex, 20 a page; every decode is counted in `decodes`.
    static func dex(counting decodes: Counter = Counter()) -> InfiniteQueryDefinition<PokemonRow> {
        InfiniteQueryDefinition(QueryKey("pokemon"), path: "/api/v2/pokemon/", query: ["limit": "20"], decode: { row in
            decodes.add()
            return try RowDecoder().decode(PokemonRow.self, from: row.json)
        })
    }
}

extension ModelTests {
    @Suite("InfiniteQueryModel: pages on demand, hasMore, isLoadingMore, decode only what changed, release")
    @MainActor
    struct InfiniteQueryModelTests {
        @Test("loads 151 pokemon by 20 via loadMore: IDs 1–151 once each, in order, hasMore false exactly after the last page")
        func wholeDexByLoadMore() async throws {
            try await withModelStore { h in
                DexFixture.script(h, count: 151)
                let model = InfiniteQueryModel(.dex(), store: h.store)
                // Observing the empty list fetched its first page, and only that one.
                await waitUntil { model.rows.count == 20 }
                var counts = [model.rows.count]
                var hasMore = [model.hasMore]
                while model.hasMore {
                    let shown = model.rows.count
                    guard case .success(.loaded(let page)) = await model.loadMore() else {
                        Issue.record("loadMore loaded no page while hasMore was true")
                        break
                    }
                    #expect(page.pages == 1)
                    await waitUntil { model.rows.count == shown + page.rows }
                    counts.append(model.rows.count)
                    hasMore.append(model.hasMore)
                }
                #expect(counts == [20, 40, 60, 80, 100, 120, 140, 151])
                #expect(hasMore == Array(repeating: true, count: 7) + [false])
                #expect(model.rows.map(\.id) == (1...151).map(String.init))
                #expect(model.rows.map(\.value.name) == DexFixture.names(1...151))
                #expect(model.rows[24].value == PokemonRow(name: "mon25", url: "https://api.test/api/v2/pokemon/25/"))
                #expect(!model.isLoadingMore && model.loadMoreError == nil && model.state.fetch == .idle)
                #expect(h.transport.requests.map(\.request.url.query) == DexFixture.offsets(151).map { $0 == 0 ? "limit=20" : "offset=\($0)&limit=20" })

                // At the end: no request, nothing shown changes.
                let flag = ChangeFlag { _ = model.rows; _ = model.state; _ = model.isLoadingMore; _ = model.loadMoreError }
                let atEnd = try await model.loadMore().get()
                #expect(atEnd == .endReached)
                #expect(!flag.hasFired)
                #expect(h.transport.requests.count == 8)
            }
        }

        @Test("withObservationTracking: loadMore changes isLoadingMore and state while the page is in flight, rows once it shows")
        func changesExactlyWhenRowsOrStateChange() async throws {
            try await withModelStore { h in
                let gate = Gate()
                DexFixture.script(h, count: 60, replies: [20: [.held(gate, then: .json(DexFixture.body(offset: 20, of: 60), headers: ["ETag": #""page20""#])),
                                                               .status(304, headers: ["ETag": #""page20""#])]])
                let model = InfiniteQueryModel(.dex(), store: h.store)
                await waitUntil { model.rows.count == 20 && model.state.fetch == .idle }
                #expect(model.hasMore && !model.isLoadingMore)

                let rowsFlag = ChangeFlag { _ = model.rows }
                let loadingFlag = ChangeFlag { _ = model.isLoadingMore }
                let stateFlag = ChangeFlag { _ = model.state }
                let errorFlag = ChangeFlag { _ = model.loadMoreError; _ = model.decodingErrors; _ = model.pendingMutations }
                let call = Task { await model.loadMore() }
                await gate.waitUntilReached()
                await waitUntil { model.isLoadingMore && model.state.fetch == .fetching }
                #expect(loadingFlag.hasFired && stateFlag.hasFired)
                #expect(!rowsFlag.hasFired)
                #expect(model.rows.count == 20)
                gate.release()
                let page = try await call.value.get()
                #expect(page == .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 20, lsn: 2)))
                #expect(!model.isLoadingMore)
                await waitUntil { model.rows.count == 40 }
                #expect(rowsFlag.hasFired)
                #expect(!errorFlag.hasFired)

                // A revalidation of both pages answered 304: state changes (fetching, idle), rows do not.
                let rowsFlag2 = ChangeFlag { _ = model.rows }
                let loadingFlag2 = ChangeFlag { _ = model.isLoadingMore }
                #expect(try await model.refresh().get() == RefreshSummary(pages: 2, notModified: 2, rows: 0, lsn: 4))
                await waitUntil { model.state.fetch == .idle }
                #expect(!rowsFlag2.hasFired && !loadingFlag2.hasFired)
                #expect(model.rows.count == 40 && model.hasMore)
            }
        }

        @Test("concurrent loadMore calls make one request and all get its result")
        func concurrentLoadMore() async throws {
            try await withModelStore { h in
                let gate = Gate()
                DexFixture.script(h, count: 60, replies: [20: [.held(gate, then: .json(DexFixture.body(offset: 20, of: 60)))]])
                let model = InfiniteQueryModel(.dex(), store: h.store)
                await waitUntil { model.rows.count == 20 && model.state.fetch == .idle }
                let calls = (0..<6).map { _ in Task { await model.loadMore() } }
                await gate.waitUntilReached()
                #expect(model.isLoadingMore)
                gate.release()
                var results: [Result<LoadMoreResult, FetchError>] = []
                for call in calls { results.append(await call.value) }
                #expect(results == Array(repeating: .success(.loaded(RefreshSummary(pages: 1, notModified: 0, rows: 20, lsn: 2))), count: 6))
                #expect(h.transport.requests.map(\.request.url.query) == ["limit=20", "offset=20&limit=20"])
                await waitUntil { model.rows.count == 40 }
                #expect(!model.isLoadingMore)
            }
        }

        @Test("an unchanged row is not decoded again: 3 pages decode 60 rows; 304s and a first-page reset of the same bytes decode none")
        func decodesOnlyChangedRows() async throws {
            try await withModelStore { h in
                let first = ScriptedTransport.Reply.json(DexFixture.body(offset: 0, of: 60), headers: ["ETag": #""page0""#])
                DexFixture.script(h, count: 60, replies: [0: [first, .status(304, headers: ["ETag": #""page0""#]), first]])
                let decodes = Counter()
                let model = InfiniteQueryModel(.dex(counting: decodes), store: h.store)
                await waitUntil { model.rows.count == 20 }
                _ = try await model.loadMore().get()
                await waitUntil { model.rows.count == 40 }
                _ = try await model.loadMore().get()
                await waitUntil { model.rows.count == 60 }
                #expect(decodes.count == 60)
                #expect(model.decodeCount == 60)
                #expect(!model.hasMore)

                #expect(try await model.refresh().get() == RefreshSummary(pages: 3, notModified: 3, rows: 0, lsn: 6))
                await waitUntil { model.state.fetch == .idle }
                #expect(decodes.count == 60)

                // Back to the first page: rows 21–60 go, rows 1–20 have the same bytes.
                #expect(try await model.refresh(mode: .firstPage).get().rows == 20)
                await waitUntil { model.rows.count == 20 }
                #expect(model.rows.map(\.id) == (1...20).map(String.init))
                #expect(model.hasMore)
                #expect(decodes.count == 60)
            }
        }

        @Test("a page that fails ends loadMore with the error in loadMoreError, the pages kept; the next call loads it and clears it")
        func failedPage() async throws {
            try await withModelStore { h in
                DexFixture.script(h, count: 60, replies: [20: [.status(404), .json(DexFixture.body(offset: 20, of: 60))]])
                let model = InfiniteQueryModel(.dex(), store: h.store)
                await waitUntil { model.rows.count == 20 && model.state.fetch == .idle }
                let failure = await model.loadMore()
                guard case .failure(let error) = failure else {
                    Issue.record("a 404 page loaded: \(failure)")
                    return
                }
                #expect(error.code == .httpStatus)
                #expect(model.loadMoreError == error)
                #expect(!model.isLoadingMore)
                #expect(model.rows.count == 20 && model.hasMore)
                let retried = try await model.loadMore().get()
                #expect(retried == .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 20, lsn: 3)))
                #expect(model.loadMoreError == nil)
                await waitUntil { model.rows.count == 40 }
            }
        }

        @Test("a row that fails to decode: the other rows show, the error names it, the list is invalidated once")
        func rowThatDoesNotDecode() async throws {
            try await withModelStore { h in
                let broken = DexFixture.body(offset: 20, of: 40).replacingOccurrences(of: #"{"name":"mon33","#, with: #"{"name":33,"#)
                DexFixture.script(h, count: 40, replies: [20: [.json(broken, headers: ["ETag": #""page20""#]), .status(304, headers: ["ETag": #""page20""#])]])
                let model = InfiniteQueryModel(.dex(), store: h.store)
                await waitUntil { model.rows.count == 20 && model.state.fetch == .idle }
                _ = try await model.loadMore().get()
                await waitUntil { model.driftInvalidation != nil && model.rows.count == 39 }
                #expect(model.decodingErrors.map(\.rowID) == ["33"])
                #expect(!model.rows.contains { $0.id == "33" })
                // The invalidation revalidates both loaded pages (304s keep them), once.
                await h.transport.waitForRequests(4)
                await waitUntil { model.state.fetch == .idle && !model.state.isStale }
                #expect(h.transport.requests.map(\.request.url.query) == ["limit=20", "offset=20&limit=20", "limit=20", "offset=20&limit=20"])
                #expect(model.decodingErrors.map(\.rowID) == ["33"])
            }
        }

        @Test("releasing the model ends its observation: it is freed and the store's observer count drops to 0")
        func releaseEndsObservation() async throws {
            try await withModelStore { h in
                DexFixture.script(h, count: 40)
                var model: InfiniteQueryModel<PokemonRow>? = InfiniteQueryModel(.dex(), store: h.store)
                weak let released = model
                await waitUntil { model?.rows.count == 20 && model?.state.fetch == .idle }
                #expect(h.store.hub.observerCount("pokemon") == 1)
                let task = try #require(model?.observationTask)
                model = nil
                #expect(released == nil)
                await task.value
                #expect(h.store.hub.observerCount("pokemon") == 0)
                // A page loaded after the release reaches nobody and loses nothing.
                #expect(try await h.store.loadMore(InfiniteQueryDefinition<PokemonRow>.dex().resource) == .loaded(RefreshSummary(pages: 1, notModified: 0, rows: 20, lsn: 2)))
                #expect(try h.store.ids("pokemon") == (1...40).map(String.init))
            }
        }

        @Test("bad input: a model released mid-loadMore, its caller cancelled: the call returns cancelled at once, the model is freed, the page still committed")
        func releasedMidLoadMore() async throws {
            try await withModelStore { h in
                let gate = Gate()
                DexFixture.script(h, count: 60, replies: [20: [.held(gate, then: .json(DexFixture.body(offset: 20, of: 60)))]])
                var model: InfiniteQueryModel<PokemonRow>? = InfiniteQueryModel(.dex(), store: h.store)
                weak let released = model
                await waitUntil { model?.rows.count == 20 && model?.state.fetch == .idle }
                let task = try #require(model?.observationTask)
                // The caller holds the model only while loadMore() runs (as a view's task does).
                let call = Task { [weak model] in await model?.loadMore() }
                await gate.waitUntilReached()
                model = nil
                call.cancel()
                let result = try #require(await call.value)
                #expect(result == .failure(FetchError(.cancelled, "the caller stopped waiting for the next page of pokemon; the request goes on and is committed", url: "/api/v2/pokemon/")))
                #expect(released == nil)
                await task.value
                #expect(h.store.hub.observerCount("pokemon") == 0)
                gate.release()
                try await waitForRows(40, of: "pokemon", in: h.store)
                #expect(try h.store.ids("pokemon") == (1...40).map(String.init))
                #expect(try h.store.allRecords(collection: "pokemon").map(\.kind) == [.fetched, .fetched])
            }
        }

        @Test("docs/swiftui.md's loadAll appends the 7 pages after the first and ends with hasMore false")
        func docLoadAll() async throws {
            try await withModelStore { h in
                DexFixture.script(h, count: 151)
                let model = InfiniteQueryModel(Queries.pokemon, store: h.store)
                await waitUntil { model.rows.count == 20 && model.state.fetch == .idle }
                let appended = try await SwiftUIDocCode.loadAll(model)
                #expect(appended == 7)
                await waitUntil { model.rows.count == 151 }
                #expect(!model.hasMore)
                #expect(h.transport.requests.count == 8)
            }
        }

        @Test("a one-page declaration (paging .none): the first load fetches it, hasMore stays false, loadMore sends nothing")
        func onePage() async throws {
            try await withModelStore { h in
                h.transport.on("/items", reply: ItemsFixture.reply(["a", "b"]))
                let definition = InfiniteQueryDefinition<Item>(QueryKey("items"), path: "/items", rows: .rootArray, id: .field("id"), paging: .none)
                #expect(definition.resource.pageLoading == .onDemand)
                let model = InfiniteQueryModel(definition, store: h.store)
                await waitUntil { model.rows.count == 2 && model.state.fetch == .idle }
                #expect(!model.hasMore)
                let result = try await model.loadMore().get()
                #expect(result == .endReached)
                #expect(h.transport.requests.count == 1)
            }
        }
    }
}
