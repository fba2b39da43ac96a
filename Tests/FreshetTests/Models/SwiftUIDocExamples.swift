import Foundation
import Freshet
import FreshetModels
import Observation
import Testing
#if canImport(SwiftUI)
import SwiftUI
#endif

// The examples of docs/swiftui.md, verbatim, so they compile with the package: a changed API
// breaks this file and the doc is fixed with it. The SwiftUI views compile where SwiftUI
// exists (Apple platforms); the declarations and the model code compile and run everywhere.

// MARK: Section 1: declarations

struct Todo: Codable, Sendable, Hashable {
    var id: Int
    var title: String
    var completed: Bool
}

enum Queries {
    /// GET /todos: the body is the array, each row's ID its "id".
    static let todos = QueryDefinition<Todo>(QueryKey("todos"), path: "/todos", rows: .rootArray, id: .field("id"))

    /// GET /todos/3 into its own collection "todo{id=3}".
    static func todo(_ id: Int) -> QueryDefinition<Todo> {
        QueryDefinition(QueryKey("todo", ["id": .int(id)]), path: "/todos/{id}", rows: .document, id: .field("id"))
    }
}

enum Mutations {
    /// PATCH /todos/3 {"completed": true}; shows the toggled row in "todos" at once and marks
    /// the detail "todo{id=3}" stale once the server confirms.
    static let toggle = MutationDefinition<Todo>("toggleTodo",
        request: { todo in try .init(method: .patch, path: "/todos/\(todo.id)", json: ["completed": !todo.completed]) },
        optimistic: { todo in
            var toggled = todo
            toggled.completed.toggle()
            return [try Queries.todos.upsert(toggled, id: String(todo.id))]
        },
        invalidates: { todo in [Queries.todo(todo.id).key] })
}

// MARK: Section 3: an infinite list (the declaration; the view is below)

/// A row of a PokeAPI list page: `{"name":"pikachu","url":"https://pokeapi.co/api/v2/pokemon/25/"}`.
struct PokemonRow: Decodable, Sendable, Hashable {
    var name: String
    var url: String
}

extension Queries {
    /// GET /api/v2/pokemon/?limit=20, then each page's "next" URL: 20 rows a page, IDs from "url".
    static let pokemon = InfiniteQueryDefinition<PokemonRow>(QueryKey("pokemon"), path: "/api/v2/pokemon/", query: ["limit": "20"])
}

#if canImport(SwiftUI)
// MARK: Section 2: a list with pull to refresh and an optimistic toggle

struct TodoList: View {
    @State private var todos: QueryModel<Todo>
    @State private var toggle: MutationModel<Todo>
    let store: Store

    init(store: Store) {
        self.store = store
        _todos = State(initialValue: QueryModel(Queries.todos, store: store))
        _toggle = State(initialValue: MutationModel(Mutations.toggle, store: store))
    }

    var body: some View {
        NavigationStack {
            List(todos.rows) { row in
                HStack {
                    Button(row.value.completed ? "☑︎" : "☐") { toggle.mutate(row.value) }
                    NavigationLink(row.value.title) { TodoDetail(id: row.value.id, store: store) }
                }
            }
            .overlay { if todos.isLoading { ProgressView() } }
            .refreshable { await todos.refresh() }
            .safeAreaInset(edge: .bottom) {
                if let error = todos.error { Text("Could not refresh: \(error.message)") }
                if !todos.decodingErrors.isEmpty { Text("\(todos.decodingErrors.count) rows need an update") }
                if toggle.isError, let error = toggle.error { Text("Not saved: \(error.message)") }
            }
        }
    }
}

// MARK: Section 3: an infinite list

struct PokemonList: View {
    @State private var pokemon: InfiniteQueryModel<PokemonRow>

    init(store: Store) {
        _pokemon = State(initialValue: InfiniteQueryModel(Queries.pokemon, store: store))
    }

    var body: some View {
        List {
            ForEach(pokemon.rows) { row in
                Text(row.value.name)
            }
            if pokemon.hasMore {
                ProgressView()
                    .frame(maxWidth: .infinity)
                    // Runs when the last row scrolls into view, and again for each new page.
                    .task(id: pokemon.rows.count) { await pokemon.loadMore() }
            }
            if let error = pokemon.loadMoreError {
                Button("Could not load more (\(error.code)). Retry") { Task { await pokemon.loadMore() } }
            }
        }
        .overlay { if pokemon.isLoading { ProgressView() } }
        .refreshable { await pokemon.refresh() }                        // revalidates the loaded pages
        .toolbar { Button("Top") { Task { await pokemon.refresh(mode: .firstPage) } } }
    }
}

// MARK: Section 4: a detail screen

struct TodoDetail: View {
    @State private var todo: QueryModel<Todo>

    init(id: Int, store: Store) {
        _todo = State(initialValue: QueryModel(Queries.todo(id), store: store))
    }

    var body: some View {
        Group {
            if let row = todo.rows.first {
                Text(row.value.title).font(.title)
            } else if todo.isLoading {
                ProgressView()
            } else {
                Text("Not loaded yet")
            }
        }
        .refreshable { await todo.refresh() }
    }
}
#endif

// MARK: Section 6: the same models without SwiftUI (tests, a UIKit screen, a command-line tool)

enum SwiftUIDocCode {
    /// Calls `show` with the titles now and again after every change of the rows: what a
    /// SwiftUI view does by itself, written out with `withObservationTracking`.
    @MainActor
    static func render(_ todos: QueryModel<Todo>, show: @escaping @MainActor ([String]) -> Void) {
        withObservationTracking {
            show(todos.rows.map(\.value.title))
        } onChange: { [weak todos] in
            // Weak: the model keeps this closure until its next change, so a strong capture
            // would keep the model alive for good (a cycle).
            Task { @MainActor in if let todos { render(todos, show: show) } }
        }
    }

    /// Toggles a todo and waits for the server's answer.
    @MainActor
    static func toggleAndWait(_ todo: Todo, store: Store) async throws -> Bool {
        let toggle = MutationModel(Mutations.toggle, store: store)
        let outcome = try await toggle.mutateAsync(todo)   // toggle.status is .pending meanwhile
        return outcome.status == 200 && toggle.status == .success
    }

    /// Loads every page, as scrolling to the end would, and returns how many it appended.
    @MainActor
    static func loadAll(_ list: InfiniteQueryModel<PokemonRow>) async throws -> Int {
        var pages = 0
        while case .loaded = try await list.loadMore().get() { pages += 1 }
        return pages   // list.hasMore is false once the last page shows
    }
}

// MARK: Section 8: reading the old shape

/// `Item` as an older app version stored it.
private struct OldItem: Decodable {
    var id: String
    var v: String
}

extension SwiftUIDocCode {
    static func upgradeExample(_ resource: Resource) -> QueryDefinition<Item> {
        QueryDefinition(resource, as: Item.self, upgrade: { row in
            let old = try RowDecoder().decode(OldItem.self, from: row.json)
            return Item(id: old.id, v: old.v == "one" ? 1 : 0)
        })
    }
}

@Suite("docs/swiftui.md examples")
struct SwiftUIDocExamples {
    @Test("the declarations name the collections, requests and ops the doc says")
    func declarations() throws {
        #expect(Queries.todos.collection == "todos")
        #expect(Queries.todo(3).collection == "todo{id=3}")
        #expect(try Queries.todo(3).resource.url(relativeTo: URL(string: "https://api.test")).absoluteString == "https://api.test/todos/3")
        let mutation = try Mutations.toggle.mutation(for: Todo(id: 3, title: "Buy milk", completed: false))
        #expect(mutation.request.method == .patch)
        #expect(mutation.request.path == "/todos/3")
        #expect(mutation.request.body == Data(#"{"completed":true}"#.utf8))
        #expect(mutation.ops == [.upsert(Row(id: "3", json: Data(#"{"completed":true,"id":3,"title":"Buy milk"}"#.utf8)), in: "todos")])
        #expect(mutation.invalidates == ["todo{id=3}"])
        #expect(Queries.pokemon.resource == Resource.infinite("pokemon", path: "/api/v2/pokemon/", query: ["limit": "20"]))
        let upgrading = SwiftUIDocCode.upgradeExample(ItemsFixture.resource())
        #expect(try upgrading.upgrade?(Row(id: "b", json: Data(#"{"id":"b","v":"one"}"#.utf8))) == Item(id: "b", v: 1))
    }
}
