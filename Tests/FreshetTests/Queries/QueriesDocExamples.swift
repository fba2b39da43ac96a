import Foundation
import Freshet
import Testing

// The examples of docs/queries.md, verbatim inside functions, so that they compile with the
// package (a changed API breaks this file, and the doc is fixed with it).

enum QueriesDocCode {
    struct Todo: Decodable, Sendable {
        var title: String
        var completed: Bool
    }

    static let todosResource = Resource(collection: "todos", path: "/todos", rows: .rootArray, id: .field("id"))

    static func show(_ todos: [IdentifiedRow<Todo>], spinner: Bool, offline: Bool, banner: String?, updated: Date?) {}

    /// Section 1: a view driven by the query state.
    static func queryStateExample(store: Store) async throws {
        for try await snapshot in store.observe(todosResource) {
            let q = snapshot.query
            let todos = try snapshot.decodeIdentifiedRows(Todo.self)
            let spinner = q.fetch == .fetching && q.data == .empty
            let offlineBadge = q.fetch == .paused
            let banner = q.error?.message                   // nil once a later fetch succeeds
            let updated = q.dataUpdatedAt                   // "updated 2 min ago"
            show(todos, spinner: spinner, offline: offlineBadge, banner: banner, updated: updated)
        }
    }

    /// Section 6: forced reload.
    static func reloadExample(store: Store) async throws {
        try await store.refresh(todosResource, mode: .reload)   // pull-to-refresh that must bypass 304s
    }

    /// Section 7: rows with their IDs; returns what it printed.
    static func identifiedRowsExample(snapshot: Snapshot) -> String {
        var printed = ""
        func print(_ value: Any) { printed = "\(value)" }
        do {
            let todos = try snapshot.decodeIdentifiedRows(Todo.self)
            print(todos.map { "\($0.id) \($0.value.title)" })
        } catch {
            print(error)   // row "42" of todos does not decode as Todo at completed: …
        }
        return printed
    }
}

@Suite("docs/queries.md examples")
struct QueriesDocExamples {
    @Test("the rows-with-IDs example prints the IDs, or the row that does not decode")
    func identifiedRows() {
        let good = Snapshot(collection: "todos", rows: [Row(id: "p-1", json: Data(#"{"completed":false,"title":"Buy milk"}"#.utf8))], syncMark: nil, status: .fresh, lsn: 1)
        #expect(QueriesDocCode.identifiedRowsExample(snapshot: good) == #"["p-1 Buy milk"]"#)
        let bad = Snapshot(collection: "todos", rows: [Row(id: "42", json: Data(#"{"completed":"no","title":"x"}"#.utf8))], syncMark: nil, status: .fresh, lsn: 1)
        #expect(QueriesDocCode.identifiedRowsExample(snapshot: bad).hasPrefix(#"row "42" of todos does not decode as Todo at completed: "#))
        _ = (QueriesDocCode.queryStateExample, QueriesDocCode.reloadExample) // compiled, not run: they need a server
    }
}

extension QueriesDocCode {
    /// Section 9: a keyed query declaration.
    static func comments(postId: Int) -> Resource {
        .keyed(QueryKey("comments", ["postId": .int(postId)]), path: "/comments", rows: .rootArray, id: .field("id"))
    }   // GET /comments?postId=3 into collection "comments{postId=3}"
}

@Suite("docs/queries.md keyed example")
struct QueriesDocKeyedExample {
    @Test("the keyed example names collection comments{postId=3} and sends postId as a query item")
    func keyed() throws {
        let r = QueriesDocCode.comments(postId: 3)
        #expect(r.collection == "comments{postId=3}")
        #expect(try r.url(relativeTo: URL(string: "https://api.test")).absoluteString == "https://api.test/comments?postId=3")
    }
}

extension QueriesDocCode {
    struct PokemonEntry: Decodable, Sendable {
        var name: String
        var url: String
    }

    static func show(_ rows: [IdentifiedRow<PokemonEntry>], loadMoreRow: Bool) {}

    /// Section 10: an infinite list with loadMore, hasMore and the first-page reset.
    static func pagingExample(store: Store) async throws {
        let pokemon = Resource.infinite("pokemon", path: "/api/v2/pokemon/", query: ["limit": "20"])

        try await store.refresh(pokemon)                      // page 1 only: rows 1–20
        for try await snapshot in store.observe(pokemon) {
            let rows = try snapshot.decodeIdentifiedRows(PokemonEntry.self)
            let showSpinnerRow = snapshot.query.hasMore       // from the server, never guessed
            show(rows, loadMoreRow: showSpinnerRow)
            if rows.count >= 40 { break }
        }
        switch try await store.loadMore(pokemon) {           // when the user reaches the end
        case .loaded(let summary): print("page of \(summary.rows) rows")
        case .endReached: print("no more pages; nothing was sent")
        }
        try await store.refresh(pokemon, mode: .firstPage)    // reset: back to page 1 only
    }
}

@Suite("docs/queries.md paging example")
struct QueriesDocPagingExample {
    @Test("the paging example declares an infinite PokeAPI list starting at ?limit=20")
    func paging() throws {
        _ = QueriesDocCode.pagingExample // compiled, not run: it needs a server (PagingFixtureServerTests runs the same calls)
        let r = Resource.infinite("pokemon", path: "/api/v2/pokemon/", query: ["limit": "20"])
        #expect(r.pageLoading == .onDemand)
        #expect(try r.url(relativeTo: URL(string: "https://api.test")).absoluteString == "https://api.test/api/v2/pokemon/?limit=20")
    }
}
