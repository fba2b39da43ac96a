import Foundation
import Testing
@testable import Freshet

@Suite("Folding events into collections")
struct FoldTests {
    @Test("a replace keeps the server's order and drops rows it does not hold")
    func replaceKeepsServerOrder() async throws {
        try await withTemporaryStore { store in
            try await store.append(replace(rows("c", "a", "b")), to: "items")
            #expect(try store.ids("items") == ["c", "a", "b"])
            try await store.append(replace(rows("b", "d")), to: "items")
            let snapshot = try store.snapshot("items")
            #expect(snapshot.rows.map(\.id) == ["b", "d"])
            #expect(snapshot.lsn == 2)
            #expect(snapshot.syncMark?.pageCount == 0)
            #expect(snapshot.syncMark?.fetchedLSN == 2)
            #expect(snapshot.status == .fresh)
        }
    }

    @Test("a page 0 refetch holding a row from page 2 moves it: no duplicate IDs, exact order")
    func refetchedPageMovesRows() async throws {
        try await withTemporaryStore { store in
            try await store.append(page(0, isLast: false, rows("1", "2"), next: "p1"), to: "items")
            try await store.append(page(1, isLast: false, rows("3", "4"), next: "p2"), to: "items")
            try await store.append(page(2, isLast: true, rows("5", "6")), to: "items")
            #expect(try store.ids("items") == ["1", "2", "3", "4", "5", "6"])
            #expect(try store.snapshot("items").syncMark?.pageCount == 3)

            try await store.append(page(0, isLast: false, [row("1"), row("6", "six, moved")], next: "p1"), to: "items")
            let snapshot = try store.snapshot("items")
            #expect(snapshot.rows.map(\.id) == ["1", "6", "3", "4", "5"])
            #expect(try snapshot.rows.map { try name(of: $0) } == ["row 1", "six, moved", "row 3", "row 4", "row 5"])
            #expect(snapshot.syncMark?.pageCount == 3)
            // nextCursor is the next page of the last page held (page 2, the last): none.
            #expect(snapshot.syncMark?.nextCursor == nil)
            #expect(snapshot.syncMark?.pages.map(\.next) == ["p1", "p2", nil])
        }
    }

    @Test("a page that holds one ID twice stores it once, at its later place, and a fresh fetch into a new collection keeps it so")
    func pageWithRepeatedID() async throws {
        try await withTemporaryStore { store in
            try await store.append(page(0, isLast: true, [row("1"), row("2", "first two"), row("3"), row("2", "second two")]), to: "items")
            let snapshot = try store.snapshot("items")
            #expect(snapshot.rows.map(\.id) == ["1", "3", "2"])
            #expect(try snapshot.rows.map { try name(of: $0) } == ["row 1", "row 3", "second two"])
            #expect(try indexedRows(store, "items") == 3)

            try await store.append(replace([row("2", "replaced"), row("4"), row("2", "again")]), to: "items")
            let replaced = try store.snapshot("items")
            #expect(replaced.rows.map(\.id) == ["4", "2"])
            #expect(try replaced.rows.map { try name(of: $0) } == ["row 4", "again"])
            #expect(try indexedRows(store, "items") == 2)
        }
    }

    @Test("a page holding one ID three times and an ID from another page keeps the last of the three and moves the other; every index entry points at its row")
    func pageWithThriceRepeatedID() async throws {
        try await withTemporaryStore { store in
            try await store.append(page(0, isLast: false, rows("1", "2"), next: "p1"), to: "items")
            try await store.append(page(1, isLast: true, rows("3", "4")), to: "items")
            // Page 0 again, in an order its keys do not sort in: "9" three times, "4" from page 1.
            try await store.append(page(0, isLast: false, [row("9", "nine a"), row("4", "four, moved"), row("9", "nine b"), row("0"), row("9", "nine c")], next: "p1"), to: "items")
            let snapshot = try store.snapshot("items")
            #expect(snapshot.rows.map(\.id) == ["4", "0", "9", "3"])
            #expect(try snapshot.rows.map { try name(of: $0) } == ["four, moved", "row 0", "nine c", "row 3"])
            #expect(try indexPointsAtRows(store, "items") == ["4": 1, "0": 3, "9": 4, "3": UInt64(1) << 32])
        }
    }

    static let lastPageCases: [(index: Int, ids: [String], expected: [String])] = [
        (0, ["x"], ["x"]),
        (1, ["y"], ["1", "2", "y"]),
        (2, ["z", "1"], ["2", "3", "4", "z", "1"]),
    ]

    @Test("a shorter refetch ending at page k keeps the pages before k and drops every later one", arguments: lastPageCases)
    func lastPageDropsLaterPages(index: Int, ids: [String], expected: [String]) async throws {
        try await withTemporaryStore { store in
            try await store.append(page(0, isLast: false, rows("1", "2"), next: "p1"), to: "items")
            try await store.append(page(1, isLast: false, rows("3", "4"), next: "p2"), to: "items")
            try await store.append(page(2, isLast: false, rows("5", "6"), next: "p3"), to: "items")
            try await store.append(page(3, isLast: true, rows("7")), to: "items")
            try await store.append(page(index, isLast: true, ids.map { row($0) }), to: "items")
            let snapshot = try store.snapshot("items")
            #expect(snapshot.rows.map(\.id) == expected)
            #expect(snapshot.syncMark?.pageCount == index + 1)
            #expect(snapshot.syncMark?.nextCursor == nil)
        }
    }

    @Test("upserts replace a row in place and append new IDs at the end", arguments: [EventKind.fetched, .changed, .localWrite])
    func upsertInPlaceAndAppend(kind: EventKind) async throws {
        try await withTemporaryStore { store in
            try await store.append(replace(rows("1", "2", "3")), to: "items")
            let upserts = [row("2", "two, updated"), row("4", "four")]
            let event: Event = switch kind {
            case .fetched: .fetched(.init(placement: .upsert, rows: upserts, response: response()))
            case .changed: .changed(.init(upserts.map { .upsert($0) }))
            default: .localWrite(.init(upserts.map { .upsert($0) }))
            }
            try await store.append(event, to: "items")
            let snapshot = try store.snapshot("items")
            #expect(snapshot.rows.map(\.id) == ["1", "2", "3", "4"])
            #expect(try snapshot.rows.map { try name(of: $0) } == ["row 1", "two, updated", "row 3", "four"])
        }
    }

    @Test("an upsert into a paged collection goes after the last page")
    func upsertAfterPages() async throws {
        try await withTemporaryStore { store in
            try await store.append(page(0, isLast: false, rows("1", "2"), next: "p1"), to: "items")
            try await store.append(page(1, isLast: true, rows("3")), to: "items")
            try await store.append(.changed(.init([.upsert(row("9")), .upsert(row("1", "one, updated"))])), to: "items")
            let snapshot = try store.snapshot("items")
            #expect(snapshot.rows.map(\.id) == ["1", "2", "3", "9"])
            #expect(try name(of: snapshot.rows[0]) == "one, updated")
        }
    }

    @Test("a local write applies upserts and deletes in order")
    func localWriteUpsertsAndDeletes() async throws {
        try await withTemporaryStore { store in
            try await store.localWrite("favourites", [
                .upsert(row("25", "pikachu")), .upsert(row("133", "eevee")), .upsert(row("1", "bulbasaur")),
                .delete(id: "133"), .delete(id: "not-there"), .upsert(row("25", "pikachu!")),
            ])
            var snapshot = try store.snapshot("favourites")
            #expect(snapshot.rows.map(\.id) == ["25", "1"])
            #expect(try snapshot.rows.map { try name(of: $0) } == ["pikachu!", "bulbasaur"])
            #expect(snapshot.status == .fresh)
            #expect(snapshot.syncMark?.fetchedAt == nil)

            try await store.localWrite("favourites", [.delete(id: "1"), .upsert(row("7", "squirtle")), .delete(id: "25")])
            snapshot = try store.snapshot("favourites")
            #expect(snapshot.rows.map(\.id) == ["7"])
            #expect(snapshot.lsn == 2)

            try await store.localWrite("favourites", [.delete(id: "7")])
            snapshot = try store.snapshot("favourites")
            #expect(snapshot.rows == [])
            #expect(snapshot.status == .empty)
        }
    }

    @Test("a failed fetch keeps the rows and records the failure on the SyncMark")
    func fetchFailedKeepsRows() async throws {
        try await withTemporaryStore { store in
            try await store.append(replace(rows("1", "2"), etag: #""v1""#), to: "items")
            try await store.append(.fetchFailed(.init(url: "http://h/items", reason: "httpStatus", status: 503, message: "answered 503")), to: "items")
            try await store.append(.fetchFailed(.init(url: "http://h/items", reason: "timedOut", message: "timed out", attempt: 2)), to: "items")

            let snapshot = try store.snapshot("items")
            #expect(snapshot.rows.map(\.id) == ["1", "2"])
            let mark = try #require(snapshot.syncMark)
            let failure = SyncMark.FailureInfo(reason: "timedOut", status: nil, message: "timed out", lsn: 3)
            #expect(mark.lastError == failure)
            #expect(mark.consecutiveFailures == 2)
            #expect(mark.fetchedLSN == 1)
            #expect(mark.lastLSN == 3)
            #expect(mark.etag == #""v1""#)
            #expect(mark.lastAttemptAt == TestClock.now)
            #expect(snapshot.status == .failed(error: failure, lastSyncedAt: TestClock.now))

            try await store.append(replace(rows("2", "3")), to: "items")
            let recovered = try store.snapshot("items")
            #expect(recovered.rows.map(\.id) == ["2", "3"])
            #expect(recovered.syncMark?.lastError == nil)
            #expect(recovered.syncMark?.consecutiveFailures == 0)
            #expect(recovered.status == .fresh)
        }
    }

    @Test("a failure before any fetch shows failed with no last sync")
    func failureBeforeFirstFetch() async throws {
        try await withTemporaryStore { store in
            try await store.append(.fetchFailed(.init(url: "http://h/items", reason: "httpStatus", status: 404, message: "answered 404")), to: "items")
            let snapshot = try store.snapshot("items")
            let failure = SyncMark.FailureInfo(reason: "httpStatus", status: 404, message: "answered 404", lsn: 1)
            #expect(snapshot.rows == [])
            #expect(snapshot.status == .failed(error: failure, lastSyncedAt: nil))
        }
    }

    @Test("an invalidation makes fetched rows stale until the next fetch")
    func invalidatedIsStale() async throws {
        try await withTemporaryStore { store in
            try await store.append(replace(rows("1")), to: "items")
            #expect(try store.snapshot("items").status == .fresh)
            try await store.invalidate("items", reason: "pulled to refresh")
            let stale = try store.snapshot("items")
            #expect(stale.status == .stale)
            #expect(stale.rows.map(\.id) == ["1"])
            #expect(stale.syncMark?.invalidatedAt == TestClock.now)
            #expect(stale.syncMark?.invalidatedLSN == 2)
            #expect(stale.lsn == 2)

            try await store.append(replace(rows("1", "2")), to: "items")
            let fresh = try store.snapshot("items")
            #expect(fresh.status == .fresh)
            #expect(fresh.syncMark?.invalidatedAt == nil)
            #expect(fresh.syncMark?.invalidatedLSN == nil)
        }
    }

    @Test("an invalidated local-only collection is stale, as invalidate(_:) documents")
    func invalidatedLocalCollectionIsStale() async throws {
        try await withTemporaryStore { store in
            try await store.localWrite("favourites", [.upsert(row("25", "pikachu"))])
            try await store.invalidate("favourites")
            let snapshot = try store.snapshot("favourites")
            #expect(snapshot.syncMark?.invalidatedLSN == 2)
            #expect(snapshot.status == .stale)
        }
    }

    @Test("a refetch of identical rows does not move rowsLSN; a changed row does")
    func rowsLSNTracksChanges() async throws {
        try await withTemporaryStore { store in
            try await store.append(replace(rows("1", "2")), to: "items")
            try await store.append(replace(rows("1", "2")), to: "items")
            var mark = try #require(try store.snapshot("items").syncMark)
            #expect(mark.rowsLSN == 1)
            #expect(mark.lastLSN == 2)
            #expect(mark.fetchedLSN == 2)
            try await store.append(replace([row("1"), row("2", "changed")]), to: "items")
            try await store.localWrite("items", [.delete(id: "absent")])
            mark = try #require(try store.snapshot("items").syncMark)
            #expect(mark.rowsLSN == 3)
            #expect(mark.lastLSN == 4)
        }
    }

    @Test("an invalidation newer than a response's basis survives that response")
    func invalidationAfterBasisSurvives() async throws {
        try await withTemporaryStore { store in
            try await store.append(replace(rows("1")), to: "items")
            try await store.invalidate("items") // LSN 2
            // A response to a request sent at LSN 1, before the invalidation.
            try await store.append(.fetched(.init(placement: .replace, rows: rows("1", "2"), response: response(), basisLSN: 1)), to: "items")
            var snapshot = try store.snapshot("items")
            #expect(snapshot.rows.map(\.id) == ["1", "2"])
            #expect(snapshot.syncMark?.invalidatedLSN == 2)
            #expect(snapshot.status == .stale)
            // A response to a request sent after it answers the invalidation.
            try await store.append(.fetched(.init(placement: .replace, rows: rows("1", "2"), response: response(), basisLSN: 3)), to: "items")
            snapshot = try store.snapshot("items")
            #expect(snapshot.syncMark?.invalidatedLSN == nil)
            #expect(snapshot.status == .fresh)
        }
    }

    @Test("a no-store response withholds its rows and removes the stored ones")
    func rowsWithheld() async throws {
        try await withTemporaryStore { store in
            try await store.append(replace(rows("1", "2")), to: "items")
            try await store.append(.fetched(.init(placement: .replace, rows: [], response: response(cacheControl: "no-store"), rowsWithheld: true)), to: "items")
            let snapshot = try store.snapshot("items")
            #expect(snapshot.rows == [])
            #expect(snapshot.syncMark?.noStore == true)
            #expect(snapshot.syncMark?.rowsLSN == 2)
        }
    }

    @Test("a 304 keeps rows and validators it does not carry, and clears failures")
    func notModifiedTouchesMark() async throws {
        try await withTemporaryStore { store in
            try await store.append(.fetched(.init(placement: .replace, rows: rows("1"), response: response(etag: #""v1""#, cacheControl: "max-age=60"))), to: "items")
            try await store.append(.fetchFailed(.init(url: "http://h/items", reason: "timedOut", message: "timed out")), to: "items")
            try await store.append(.notModified(.init(response: ResponseInfo(url: "http://h/items", status: 304, cacheControl: "max-age=120", age: "3"))), to: "items")
            let snapshot = try store.snapshot("items")
            let mark = try #require(snapshot.syncMark)
            #expect(snapshot.rows.map(\.id) == ["1"])
            #expect(mark.etag == #""v1""#)
            #expect(mark.cacheControl == "max-age=120")
            #expect(mark.age == "3")
            #expect(mark.fetchedLSN == 1)
            #expect(mark.lastError == nil)
            #expect(mark.consecutiveFailures == 0)
            #expect(snapshot.status == .fresh)
        }
    }

    @Test("under maxAge(300 s) rows are fresh while younger than 300 s", arguments: [(299.5, true), (300.0, false), (3_600.0, false)])
    func staleAfterMaxAge(elapsed: Double, fresh: Bool) async throws {
        let clock = ManualClock()
        try await withTemporaryStore(dependencies: .test(now: clock.now)) { store in
            try await store.append(replace(rows("1")), to: "items")
            clock.advance(bySeconds: elapsed)
            #expect(try store.snapshot("items").status == (fresh ? .fresh : .stale))
        }
    }

    @Test("appending a store's log to an empty store rebuilds the same rows and SyncMarks")
    func replayRebuildsState() async throws {
        try await withTemporaryStore { original in
            try await original.append(page(0, isLast: false, rows("1", "2"), next: "p1"), to: "items")
            try await original.append(page(1, isLast: true, rows("3", "1")), to: "items")
            try await original.append(.changed(.init([.upsert(row("4")), .delete(id: "2")])), to: "items")
            try await original.append(.fetchFailed(.init(url: "u", reason: "timedOut", message: "m")), to: "items")
            try await original.localWrite("favourites", [.upsert(row("25")), .upsert(row("1")), .delete(id: "25")])
            try await original.invalidate("items")
            let records = try original.allRecords()

            try await withTemporaryStore { replayed in
                for record in records { try await replayed.append(record.event, to: record.collection) }
                for collection in ["items", "favourites"] {
                    #expect(try replayed.snapshot(collection) == original.snapshot(collection))
                }
                #expect(try replayed.ids("items") == ["3", "1", "4"])
            }
        }
    }
}

/// The number of IDs the collection's index holds (read outside any async context).
private func indexedRows(_ store: Store, _ collection: String) throws -> Int {
    try store.env.read { txn in try store.state.rowCount(collection, in: txn) }
}

/// Every index entry of the collection, ID → position, after checking that each points at a
/// stored row with that ID and that every stored row is indexed.
private func indexPointsAtRows(_ store: Store, _ collection: String) throws -> [String: UInt64] {
    try store.env.read { txn in
        let prefix = Keys.collection(collection)
        var index: [String: UInt64] = [:]
        try txn.forEach(store.state.dbs.rowIndex, from: prefix) { key, value in
            guard key.starts(with: prefix) else { return false }
            index[String(decoding: key[prefix.count...], as: UTF8.self)] = Keys.readUInt64(value, at: 0)
            return true
        }
        var stored: [String: UInt64] = [:]
        try txn.forEach(store.state.dbs.rows, from: prefix) { key, value in
            guard key.count == prefix.count + 8, key.starts(with: prefix) else { return false }
            stored[try MaterializedState.decodeRowID(value)] = Keys.readUInt64(key, at: prefix.count)
            return true
        }
        #expect(stored == index)
        return index
    }
}
