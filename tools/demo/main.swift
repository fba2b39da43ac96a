import Foundation
import Freshet
import FreshetModels
import Observation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// `make demo`: an app's screens on the app layer (FreshetModels), over the real PokeAPI and
// JSONPlaceholder data the fixture server serves on loopback, stored in an LMDB event log in
// ./demo-store: the Pokédex as an infinite list, detail screens as keyed queries, favourites
// joined with the list, todos with an optimistic toggle, a change pushed by the server over
// Server-Sent Events, and an offline relaunch. Every step prints what a view would show.

struct DemoFailure: Error, CustomStringConvertible {
    var description: String
}

/// A row of the PokeAPI list.
struct PokemonEntry: Decodable, Sendable { let name: String; let url: String }

/// Types of one pokemon, from its detail document.
struct PokemonDetail: Decodable, Sendable {
    struct Slot: Decodable, Sendable { struct Named: Decodable, Sendable { let name: String }; let type: Named }
    let id: Int
    let name: String
    let types: [Slot]
}

/// The parts of a PokeAPI species document the detail screen shows.
struct Species: Decodable, Sendable {
    struct Named: Decodable, Sendable { let name: String }
    struct Genus: Decodable, Sendable { let genus: String; let language: Named }
    struct Flavor: Decodable, Sendable { let flavor_text: String; let language: Named }
    let id: Int
    let name: String
    let capture_rate: Int
    let habitat: Named?
    let genera: [Genus]
    let flavor_text_entries: [Flavor]
}

/// A JSONPlaceholder todo.
struct Todo: Codable, Sendable { var userId: Int; var id: Int; var title: String; var completed: Bool }

/// The app's declarations (docs/swiftui.md): made once, handed to every model that shows them.
enum Queries {
    /// The Pokédex, 20 a page (`next` URLs); freshness from the server's Cache-Control.
    static let pokemon = InfiniteQueryDefinition<PokemonEntry>(QueryKey("pokemon"), path: "/api/v2/pokemon/", query: ["limit": "20"], freshness: .http)
    /// One pokemon's document, in collection `pokemon{id=N}`.
    static func pokemon(_ id: Int) -> QueryDefinition<PokemonDetail> {
        QueryDefinition(QueryKey("pokemon", ["id": .int(id)]), path: "/api/v2/pokemon/{id}/", rows: .document, id: .field("id"), freshness: .http)
    }
    /// One species' document, in collection `pokemon-species{id=N}`.
    static func species(_ id: Int) -> QueryDefinition<Species> {
        QueryDefinition(QueryKey("pokemon-species", ["id": .int(id)]), path: "/api/v2/pokemon-species/{id}/", rows: .document, id: .field("id"), freshness: .http)
    }
    /// User 1's todos. `.http` like the rest: a second run within max-age sends no GET at all.
    static let todos = QueryDefinition<Todo>(QueryKey("todos"), path: "/todos", query: ["userId": "1"], rows: .rootArray, id: .field("id"), freshness: .http)
}

enum Mutations {
    /// PATCH /todos/N {"completed": …}, the toggled row shown in `todos` at once.
    static let toggle = MutationDefinition<Todo>("toggleTodo",
        request: { todo in try .init(method: .patch, path: "/todos/\(todo.id)", json: ["completed": !todo.completed]) },
        optimistic: { todo in
            var toggled = todo
            toggled.completed.toggle()
            return [try Queries.todos.upsert(toggled, id: String(todo.id))]
        })
}

let storeURL = URL(fileURLWithPath: "demo-store")
let requestLog = URL(fileURLWithPath: "demo-requests.jsonl")

/// `print`, flushed at once: line by line also into a pipe (`make demo | tee`, CI logs).
/// A failed flush is remembered in ``outputFailure`` and reported when the demo ends.
func print(_ line: String) {
    Swift.print(line)
    flushOutput()
}

func ms(_ d: Duration) -> String {
    String(format: "%.1f ms", Double(d.components.attoseconds) / 1e15 + Double(d.components.seconds) * 1000)
}

func elapsed(since start: ContinuousClock.Instant) -> String {
    ms(ContinuousClock.now - start)
}

func describe(_ date: Date?) -> String {
    guard let date else { return "never" }
    return LogRecord.iso8601(date)
}

/// Ends a demo that hangs (it runs in CI): after `limit`, names the step it was in, stops the
/// fixture server and exits 1. Every wait of the demo is for an event that should come in
/// milliseconds; a bug must fail the run, not stall it.
@MainActor
final class Watchdog {
    var step = "starting"
    var server: FixtureServer?

    init(limit: Duration) {
        Task { @MainActor [self] in
            try await Task.sleep(for: limit)
            FileHandle.standardError.write(Data("demo: step \(step.debugDescription) did not finish within \(limit); stopping\n".utf8))
            StopOnSignal.watch(nil)
            server?.stop()
            exit(1)
        }
    }
}

/// Returns once `condition` holds, woken by the changes of the models it reads (the
/// Observation module's `Observations`: what a SwiftUI view does by itself).
@MainActor
func until(_ condition: @escaping @MainActor @Sendable () -> Bool) async {
    // (A `where holds` clause here crashes Swift 6.3.1's IRGen on Linux; the `if` does not.)
    for await holds in Observations({ condition() }) {
        if holds { return }
    }
}

/// `#1 ✓ "delectus aut autem"`.
func line(_ todo: Todo) -> String {
    "#\(todo.id) \(todo.completed ? "✓" : "·") \(todo.title.prefix(28).debugDescription)"
}

/// Who sent a request the fixture server logged: the store, or the demo itself (its direct
/// `PATCH` standing in for another client's edit, and the EventSource's `GET /events`).
enum Sender { case store, directEdit, eventStream }

/// The fixture server's request log lines so far.
func requestLines() throws -> [(method: String, status: Int, sender: Sender)] {
    struct Line: Decodable { let method: String; let status: Int; let path: String; let idempotency_key: String? }
    guard FileManager.default.fileExists(atPath: requestLog.path) else { return [] }
    let text = try String(contentsOf: requestLog, encoding: .utf8)
    return try text.split(separator: "\n").map { try JSONDecoder().decode(Line.self, from: Data($0.utf8)) }.map { line in
        // The store sends every write with an Idempotency-Key; the demo's direct PATCH has none.
        let sender: Sender = line.path.hasPrefix("/events") ? .eventStream
            : line.method != "GET" && line.idempotency_key == nil ? .directEdit : .store
        return (line.method, line.status, sender)
    }
}

/// "12 requests: 3 × GET 200, 7 × GET 304, 2 × PATCH 200", for the log lines after the first
/// `skipping`; requests the demo sent itself are named apart ("…; and the demo's own: 1 ×
/// PATCH 200 (direct edit), 2 × GET 200 (SSE /events)").
func requestCounts(skipping: Int = 0) throws -> String {
    let lines = try requestLines().dropFirst(skipping)
    // GETs first, then writes; by method, then status.
    func order(_ line: (method: String, status: Int, sender: Sender)) -> String { (line.method == "GET" ? "0" : "1") + line.method + String(line.status) }
    func groups(_ lines: [(method: String, status: Int, sender: Sender)], _ label: String = "") -> [String] {
        let grouped = Dictionary(grouping: lines, by: order)
        return grouped.keys.sorted().compactMap { key -> String? in
            guard let first = grouped[key]?.first, let count = grouped[key]?.count else { return nil }
            return "\(count) × \(first.method) \(first.status)\(label)"
        }
    }
    let store = lines.filter { $0.sender == .store }
    let own = groups(lines.filter { $0.sender == .directEdit }, " (direct edit)") + groups(lines.filter { $0.sender == .eventStream }, " (SSE /events)")
    var text = "\(store.count) request\(store.count == 1 ? "" : "s") by the store" + (store.isEmpty ? "" : ": " + groups(store).joined(separator: ", "))
    if !own.isEmpty { text += "; and the demo's own: " + own.joined(separator: ", ") }
    return text
}

/// Step 2: the Pokédex list as an infinite query, loaded 20 at a time as a view scrolling to
/// the end would.
@MainActor
func listDemo(_ list: InfiniteQueryModel<PokemonEntry>, logged: Int) async throws -> String {
    let start = ContinuousClock.now
    // The model observes the list: the stored pages show at once; a stale list is revalidated
    // in the background (the pages loaded so far, each with its own validators). A fresh list
    // whose last attempt could not connect (the previous run's offline step) shows `paused`.
    await until { !list.rows.isEmpty }
    let shownIn = elapsed(since: start)
    await until { list.state.fetch != .fetching && !list.state.isStale }
    let freshIn = elapsed(since: start)
    print("   on screen in \(shownIn): \(list.rows.count) rows; fresh after \(freshIn) (\(try requestCounts(skipping: logged))); fetch \(list.state.fetch), hasMore \(list.hasMore)")
    if list.state.fetch == .paused {
        print("   (paused: the last attempt, the previous run's offline refresh, could not connect; the rows are fresh, so")
        print("    nothing is sent until the app reports the network back, step 6c)")
    }
    while list.hasMore {
        let shown = list.rows.count
        switch await list.loadMore() {
        case .success(.loaded(let page)):
            await until { list.rows.count > shown }
            print("   loadMore: +\(page.rows) rows → \(list.rows.count) rows (last \(list.rows.last?.value.name ?? "-")), hasMore \(list.hasMore)")
        case .success(.endReached):
            break
        case .failure(let error):
            throw error
        }
    }
    guard case .success(.endReached) = await list.loadMore() else { throw DemoFailure(description: "loadMore past the end loaded a page") }
    print("   loadMore at the end: endReached, no request sent; isLoadingMore \(list.isLoadingMore)")
    let total = elapsed(since: start)
    print("   \(list.rows.count) rows (IDs \(list.rows.first?.id ?? "-")–\(list.rows.last?.id ?? "-"), each once) in \(total); \(list.decodeCount) rows decoded by this model")
    return total
}

/// Step 3: detail screens, each a keyed `QueryModel` with its own collection and SyncMark.
@MainActor
func detailsDemo(_ store: Store) async throws -> [Int: PokemonDetail] {
    print("3. Details of 9 pokemon, each a keyed QueryModel (`pokemon{id=N}`, its own collection and SyncMark):")
    let logged = try requestLines().count
    var times: [Duration] = []
    var details: [Int: PokemonDetail] = [:]
    for id in [1, 2, 3, 4, 5, 6, 7, 8, 25] {
        // How long until the detail appears: the model observes its key, a stale one is
        // fetched, folded and committed, and the decoded row shows.
        let start = ContinuousClock.now
        let detail = QueryModel(Queries.pokemon(id), store: store)
        await until { !detail.rows.isEmpty || detail.error != nil }
        times.append(ContinuousClock.now - start)
        // A stale stored detail shows at once and is revalidated: wait for that too, so the
        // requests counted below are all answered.
        await until { detail.state.fetch == .idle && (!detail.state.isStale || detail.error != nil) || detail.state.fetch == .paused }
        if let row = detail.rows.first { details[id] = row.value }
    }
    let sorted = times.sorted()
    print("   each on screen (model made → decoded row shown) in median \(ms(sorted[4])), at most \(ms(sorted[8])); requests: \(try requestCounts(skipping: logged))")

    let species = QueryModel(Queries.species(25), store: store)
    await until { !species.rows.isEmpty || species.error != nil }
    guard let pikachu = species.rows.first?.value else { throw DemoFailure(description: "species 25 did not load: \(String(describing: species.error))") }
    let genus = pikachu.genera.first { $0.language.name == "en" }?.genus ?? "-"
    let flavor = (pikachu.flavor_text_entries.first { $0.language.name == "en" }?.flavor_text ?? "-")
        .split(whereSeparator: \.isWhitespace).joined(separator: " ")
    print("   species 25 (`\(Queries.species(25).collection)`): \(pikachu.name), the \(genus), habitat \(pikachu.habitat?.name ?? "-"), capture rate \(pikachu.capture_rate)")
    print("     \"\(flavor)\"")
    return details
}

/// Step 4: favourites, a local-only collection, joined with the list's rows by ID.
@MainActor
func favouritesDemo(_ store: Store, list: InfiniteQueryModel<PokemonEntry>, details: [Int: PokemonDetail]) async throws {
    print("4. Favourites: a local-only collection (`localWrite`, never sent), joined with the list by row ID:")
    let added = Date()
    try await store.localWrite("favourites", [
        .upsert(try Row(id: "25", encoding: ["addedAt": LogRecord.iso8601(added)])),
        .upsert(try Row(id: "133", encoding: ["addedAt": LogRecord.iso8601(added)])),
    ])
    let favourites = try store.snapshot("favourites").rows.map(\.id)
    let byID = Dictionary(uniqueKeysWithValues: list.rows.map { ($0.id, $0.value) })
    let names = favourites.map { id in "#\(id) \(byID[id]?.name ?? "(not in the list)")" }
    print("   favourites \(favourites.joined(separator: ", ")) → \(names.joined(separator: ", "))")

    print("\n5. The first rows of the list, with the types from their detail models:")
    for row in list.rows.prefix(8) {
        let types = details[Int(row.id) ?? 0].map { $0.types.map(\.type.name).joined(separator: "/") } ?? "-"
        print("   #\(row.id.padding(toLength: 4, withPad: " ", startingAt: 0)) \(row.value.name.padding(toLength: 12, withPad: " ", startingAt: 0)) \(types)")
    }
}

/// Step 6: todos with an optimistic toggle through a `MutationModel`.
@MainActor
func mutationsDemo(_ store: Store, todos: QueryModel<Todo>, server: FixtureServer) async throws {
    print("\n6. Todos (JSONPlaceholder, user 1) as a QueryModel; a MutationModel toggles them:")
    await until { !todos.rows.isEmpty && todos.state.fetch != .fetching && !todos.state.isStale }
    guard todos.rows.count >= 2 else { throw DemoFailure(description: "expected at least 2 todos, got \(todos.rows.count)") }
    let first = todos.rows[0].value
    let second = todos.rows[1].value
    print("   \(todos.rows.count) todos: \(line(first)) | \(line(second))")
    let toggle = MutationModel(Mutations.toggle, store: store)

    print("   a) toggle #\(first.id) while the server takes 300 ms to answer:")
    try await server.control(["delay_ms": 300])
    toggle.mutate(first)
    await until { todos.rows.first?.value.completed != first.completed }
    print("      shown at once: \(line(todos.rows[0].value)), pending \(todos.pendingMutations.count), toggle.status \(toggle.status)")
    await until { toggle.status != .pending && todos.pendingMutations.isEmpty }
    print("      the server answered: toggle.status \(toggle.status) (\(toggle.outcome.map { "HTTP \($0.status)" } ?? "-")), \(line(todos.rows[0].value)), pending \(todos.pendingMutations.count)")
    try await server.control(["delay_ms": 0])

    print("   b) toggle #\(second.id); the server answers 409 Conflict, so it rolls back:")
    try await server.control(["fail_status": 409, "fail_count": 1, "fail_method": "PATCH"])
    do throws(MutationError) {
        try await toggle.mutateAsync(second)
    } catch {
        await until { todos.pendingMutations.isEmpty }
        print("      toggle.status \(toggle.status): \(error.code), \(line(todos.rows[1].value)) again")
    }

    print("   c) offline: the server refuses connections; toggle #\(second.id) anyway:")
    try await server.control(["refuse": true])
    toggle.mutate(second)
    await until { toggle.mutationID != nil && todos.rows[1].value.completed != second.completed }
    print("      shown at once: \(line(todos.rows[1].value)), queued: \(try store.pendingMutations().map { "\($0.name) \($0.id)" }.joined(separator: ", "))")
    try await server.control(["refuse": false])
    print("      back online: networkDidBecomeReachable() sends the queued toggle and resumes paused queries")
    await store.networkDidBecomeReachable()
    await until { toggle.status != .pending && todos.pendingMutations.isEmpty }
    print("      toggle.status \(toggle.status) (sent once, Idempotency-Key \(toggle.mutationID.map { "\($0)" } ?? "-")), \(line(todos.rows[1].value))")
}

/// Step 7: a change made on the server reaches the todos model over Server-Sent Events.
@MainActor
func pushDemo(_ store: Store, todos: QueryModel<Todo>, server: FixtureServer) async throws {
    print("\n7. Server push: an EventSource follows the fixture server's /events (SSE); someone else edits a todo:")
    // The demo's server numbers its changes from 1 on every start, so each run is a new stream
    // with a source name of its own. An app keeps one name and resumes from its cursor.
    let name = "demo-events-\(Int(Date().timeIntervalSince1970))"
    let events = EventSource(store: store, configuration: .init(url: server.baseURL.appendingPathComponent("events"), source: name,
                                                                resources: [Queries.todos.resource]))
    let stream = Task { try await events.run() }
    guard let target = todos.rows.dropFirst(2).first?.value else { throw DemoFailure(description: "expected a third todo") }
    let title = "edited elsewhere at \(Date().formatted(.iso8601.time(includingFractionalSeconds: false)))"
    print("   PATCH /todos/\(target.id) {\"title\": \(title.debugDescription)}, sent straight to the server (not through the store)")
    try await server.patch("/todos/\(target.id)", ["title": title])
    await until { todos.rows.first { $0.id == String(target.id) }?.value.title == title }
    let cursor = try store.pushCursor(source: name)
    print("   the todos model shows it: \(line(todos.rows.first { $0.id == String(target.id) }!.value)) (pushed change, event ID \(cursor?.eventID ?? "-"))")
    stream.cancel()
    _ = await stream.result
    let statistics = events.statistics
    print("   the stream sent every change since the server started (the toggles of step 6, then this edit): \(statistics.events) events, \(statistics.applied) folded; stopped")
}

@MainActor
func run(_ watchdog: Watchdog) async throws {
    // One request log per run, so it shows exactly what this run sent.
    if FileManager.default.fileExists(atPath: requestLog.path) { try FileManager.default.removeItem(at: requestLog) }
    let server = try FixtureServer.start(requestLog: requestLog)
    watchdog.server = server
    StopOnSignal.watch(server.process)
    print("Fixture server (real PokeAPI data, 151 pokemon; JSONPlaceholder) on \(server.baseURL.absoluteString)")
    print("Store: \(storeURL.path)\n")

    let configuration = Configuration(durability: .full, baseURL: server.baseURL)
    var store: Store? = try Store(directory: storeURL, configuration: configuration)
    guard let live = store else { return }

    let before = try live.snapshot("pokemon")
    if before.rows.isEmpty {
        print("1. The store is empty: an observer's first snapshot has 0 rows (status \(before.status)).")
    } else {
        print("1. From an earlier run, an observer sees \(before.rows.count) rows at once, before any network (status \(before.status)).")
        print("   freshness: \(Freshness.evaluate(before.syncMark, policy: .http, now: Date()).reason)")
    }

    watchdog.step = "2 (the list)"
    print("2. The Pokédex as an InfiniteQueryModel (20 a page; policy .http: the server's Cache-Control), loadMore until hasMore is false:")
    let logged = try requestLines().count
    let list = InfiniteQueryModel(Queries.pokemon, store: live)
    let listTime = try await listDemo(list, logged: logged)
    watchdog.step = "3 (details)"
    let details = try await detailsDemo(live)
    watchdog.step = "4 (favourites)"
    try await favouritesDemo(live, list: list, details: details)
    if let mark = try live.snapshot("pokemon").syncMark {
        print("   SyncMark of `pokemon`: fetched at \(describe(mark.fetchedAt)), \(mark.pageCount) pages, Cache-Control \(mark.cacheControl ?? "none")")
    }

    watchdog.step = "6 (todos)"
    let todos = QueryModel(Queries.todos, store: live)
    try await mutationsDemo(live, todos: todos, server: server)
    watchdog.step = "7 (server push)"
    try await pushDemo(live, todos: todos, server: server)
    watchdog.step = "8 (offline relaunch)"

    print("\n8. The server goes away; the app relaunches offline.")
    StopOnSignal.watch(nil)
    server.stop()
    live.close()
    store = nil
    let reopenStart = ContinuousClock.now
    let relaunched = try Store(directory: storeURL, configuration: configuration)
    let offlineList = InfiniteQueryModel(Queries.pokemon, store: relaunched)
    await until { !offlineList.rows.isEmpty }
    let reopenTime = elapsed(since: reopenStart)
    print("   the list model shows \(offlineList.rows.count) rows \(reopenTime) after reopening — from disk, last synced \(describe(offlineList.state.dataUpdatedAt))")
    let refresh = await offlineList.refresh()
    await until { offlineList.state.fetch == .paused }
    if case .failure(let error) = refresh {
        print("   pull to refresh: one attempt, \(error.code); the query pauses (fetch \(offlineList.state.fetch), error \(offlineList.error.map { "\($0.reason)" } ?? "nil")) until the network is back")
    }
    print("   the view still shows \(offlineList.rows.count) rows: \(offlineList.rows.prefix(3).map(\.value.name).joined(separator: ", ")) …")
    relaunched.close()

    print("\nTimings: the list \(listTime) (on screen, then every page); reopen to the first rows on screen \(reopenTime).")
    print("Requests the server saw in this run: \(try requestCounts()) (one JSON line each in \(requestLog.path))")
    print("Inspect the log:  swift run -c release freshet dump demo-store   (or: make freshet ARGS=\"dump demo-store\")")
}

checkArguments(Array(CommandLine.arguments.dropFirst()))
StopOnSignal.install()
do {
    try await run(Watchdog(limit: .seconds(60)))
    exitIfOutputFailed()
} catch {
    FileHandle.standardError.write(Data("demo: \(error)\n".utf8))
    exit(1)
}
