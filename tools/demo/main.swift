import Foundation
import Freshet

// `make demo`: syncs the real PokeAPI data (served on loopback by the fixture server) into an
// LMDB event log in ./demo-store, observes it, then serves the same rows offline after a
// relaunch. Every step prints what an app's view would see.

struct DemoFailure: Error, CustomStringConvertible {
    var description: String
}

/// Types of one pokemon, from its detail document.
struct PokemonDetail: Decodable {
    struct Slot: Decodable { struct Named: Decodable { let name: String }; let type: Named }
    let id: Int
    let name: String
    let types: [Slot]
}

/// A row of the PokeAPI list.
struct PokemonEntry: Decodable { let name: String; let url: String }

let storeURL = URL(fileURLWithPath: "demo-store")
let requestLog = URL(fileURLWithPath: "demo-requests.jsonl")

func elapsed(since start: ContinuousClock.Instant) -> String {
    let d = ContinuousClock.now - start
    return String(format: "%.1f ms", Double(d.components.attoseconds) / 1e15 + Double(d.components.seconds) * 1000)
}

func describe(_ date: Date?) -> String {
    guard let date else { return "never" }
    return LogRecord.iso8601(date)
}

/// A JSONPlaceholder todo.
struct Todo: Codable { let userId: Int; let id: Int; let title: String; let completed: Bool }

/// Step 6: optimistic edits of JSONPlaceholder todos, printed as an observer sees them.
@MainActor
func mutationsDemo(_ store: Store, server: FixtureServer) async throws {
    // `.http` like the rest: a second run within max-age sends no GET at all (only the edits'
    // PATCHes), though the demo's server restarts from the original data each run.
    let todos = Resource(collection: "todos", path: "/todos", query: ["userId": "1"], rows: .rootArray, id: .field("id"), freshness: .http)
    try await store.refreshIfNeeded(todos)
    print("\n6. Optimistic mutations on `todos` (JSONPlaceholder, user 1). The observer prints every emission:")
    // The watcher reports the rows version (rowsLSN) of each snapshot it printed, so each step
    // can wait until the collection's current rows are on screen before it goes on.
    let (printed, printedLSN) = AsyncStream<LSN>.makeStream()
    let watcher = Task { @MainActor in
        for try await snapshot in store.observe("todos") {
            let shown = try snapshot.decodeRows(Todo.self).prefix(2).map { "#\($0.id) \($0.completed ? "✓" : "·") \($0.title.prefix(24).debugDescription)" }
            print("   observer: \(snapshot.rows.count) rows, pending \(snapshot.pendingMutations.count), \(snapshot.status), \(shown.joined(separator: " | "))")
            printedLSN.yield(snapshot.syncMark?.rowsLSN ?? .zero)
        }
    }
    var seen = printed.makeAsyncIterator()
    var target = try store.snapshot("todos").syncMark?.rowsLSN ?? .zero
    while let lsn = await seen.next(isolation: #isolation), lsn < target {}
    func edit(_ todo: Todo, title: String? = nil, completed: Bool? = nil) throws -> Mutation {
        let changed = Todo(userId: todo.userId, id: todo.id, title: title ?? todo.title, completed: completed ?? todo.completed)
        return Mutation(name: "editTodo", ops: [.upsert(try Row(id: String(todo.id), encoding: changed), in: "todos")],
                        request: try .init(method: .patch, path: "/todos/\(todo.id)", json: changed))
    }
    let current = try store.snapshot("todos").decodeRows(Todo.self)
    guard current.count >= 2 else { throw DemoFailure(description: "expected at least 2 todos, got \(current.count)") }

    print("   a) flip the done flag of #\(current[0].id); the server confirms:")
    let confirmed = try await store.mutate(try edit(current[0], completed: !current[0].completed))
    let outcome = try await confirmed.outcome()
    target = try store.snapshot("todos").syncMark?.rowsLSN ?? .zero
    while let lsn = await seen.next(isolation: #isolation), lsn < target {}
    print("      confirmed with \(outcome.status), LSN \(outcome.lsn)")

    print("   b) rename #\(current[1].id); the server answers 409 Conflict, so it rolls back:")
    try await server.control(["fail_status": 409, "fail_count": 1, "fail_method": "PATCH"])
    let rename = try edit(current[1], title: "renamed while someone else edited")
    do throws(MutationError) {
        _ = try await store.mutate(rename).outcome()
    } catch {
        target = try store.snapshot("todos").syncMark?.rowsLSN ?? .zero
        while let lsn = await seen.next(isolation: #isolation), lsn < target {}
        print("      \(error.code): \(error.message)")
    }

    print("   c) offline: the server refuses connections; rename #\(current[1].id) anyway:")
    try await server.control(["refuse": true])
    let stamp = Date().formatted(.iso8601.time(includingFractionalSeconds: false))
    let offline = try await store.mutate(try edit(current[1], title: "written offline at \(stamp)"))
    target = try store.snapshot("todos").syncMark?.rowsLSN ?? .zero
    while let lsn = await seen.next(isolation: #isolation), lsn < target {}
    let queued = try store.pendingMutations()
    print("      queued: \(queued.map { "\($0.name) \($0.id)" }.joined(separator: ", "))")
    try await server.control(["refuse": false])
    print("      back online: networkDidBecomeReachable()")
    await store.networkDidBecomeReachable()
    let sent = try await offline.outcome()
    target = try store.snapshot("todos").syncMark?.rowsLSN ?? .zero
    while let lsn = await seen.next(isolation: #isolation), lsn < target {}
    print("      confirmed with \(sent.status) (sent once, Idempotency-Key \(sent.id))")
    watcher.cancel()
    _ = await watcher.result
}

/// "12 requests: 3 × GET 200, 7 × GET 304, 2 × PATCH 200", from the fixture server's request log.
func requestCounts() throws -> String {
    struct Line: Decodable { let method: String; let status: Int }
    let text = try String(contentsOf: requestLog, encoding: .utf8)
    let lines = try text.split(separator: "\n").map { try JSONDecoder().decode(Line.self, from: Data($0.utf8)) }
    // GETs first, then writes; by method, then status.
    func order(_ line: Line) -> String { (line.method == "GET" ? "0" : "1") + line.method + String(line.status) }
    let grouped = Dictionary(grouping: lines, by: order)
    let groups = grouped.keys.sorted().compactMap { key -> String? in
        guard let first = grouped[key]?.first, let count = grouped[key]?.count else { return nil }
        return "\(count) × \(first.method) \(first.status)"
    }
    return "\(lines.count) request\(lines.count == 1 ? "" : "s")" + (groups.isEmpty ? "" : ": " + groups.joined(separator: ", "))
}

/// How many snapshots the demo's view read.
@MainActor
final class SnapshotCounter {
    var count = 0
}

@MainActor
func run() async throws {
    // One request log per run, so it shows exactly what this run sent.
    if FileManager.default.fileExists(atPath: requestLog.path) { try FileManager.default.removeItem(at: requestLog) }
    let server = try FixtureServer.start(requestLog: requestLog)
    print("Fixture server (real PokeAPI data, 151 pokemon) on \(server.baseURL.absoluteString)")
    print("Store: \(storeURL.path)\n")

    let configuration = Configuration(durability: .full, baseURL: server.baseURL)
    var store: Store? = try Store(directory: storeURL, configuration: configuration)
    guard let live = store else { return }

    // An infinite list: a refresh fetches (or revalidates) the pages loaded so far, and
    // loadMore appends the next page of 20, as a view does when the user scrolls to the end.
    let pokemon = Resource.infinite("pokemon", path: "/api/v2/pokemon/", query: ["limit": "20"], freshness: .http)
    let before = try live.snapshot("pokemon")
    if before.rows.isEmpty {
        print("1. The store is empty: an observer's first snapshot has 0 rows (status \(before.status)).")
    } else {
        print("1. From an earlier run, an observer sees \(before.rows.count) rows at once, before any network (status \(before.status)).")
        print("   freshness: \(Freshness.evaluate(before.syncMark, policy: .http, now: Date()).reason)")
    }

    // The view: observes the projection, never the network; counts what it is sent.
    let observer = live.observe("pokemon")
    let read = SnapshotCounter()
    let emissions = Task { @MainActor in
        for try await _ in observer { read.count += 1 }
    }

    print("2. refreshIfNeeded on /api/v2/pokemon/ (the pages loaded so far; policy .http: the server's Cache-Control), then loadMore in steps of 20:")
    let syncStart = ContinuousClock.now
    let summary = try await live.refreshIfNeeded(pokemon)
    if let summary {
        let fetched = summary.pages - summary.notModified
        print("   refresh: \(summary.pages) page\(summary.pages == 1 ? "" : "s"): \(fetched) fetched (\(summary.rows) rows), \(summary.notModified) answered 304 Not Modified (rows kept); last LSN \(summary.lsn)")
    } else {
        print("   refresh: still fresh, no request sent")
    }
    var step = try live.snapshot("pokemon")
    print("   \(step.rows.count) rows, hasMore \(step.query.hasMore)")
    while step.query.hasMore {
        switch try await live.loadMore(pokemon) {
        case .loaded(let page):
            step = try live.snapshot("pokemon")
            let last = try step.rows.last.map { try $0.decode(PokemonEntry.self).name } ?? "-"
            print("   loadMore: +\(page.rows) rows → \(step.rows.count) rows (last \(last)), \(step.syncMark?.pageCount ?? 0) pages, hasMore \(step.query.hasMore), LSN \(page.lsn)")
        case .endReached:
            step = try live.snapshot("pokemon")
        }
    }
    if case .endReached = try await live.loadMore(pokemon) {
        print("   loadMore at the end: endReached, no request sent")
    }
    let syncTime = elapsed(since: syncStart)
    emissions.cancel()
    _ = await emissions.result
    print("   the observer read \(read.count) snapshots meanwhile (a slow reader gets the newest, never each page); \(syncTime) in all")

    print("3. Details of a few pokemon, each in its own collection `pokemon/ID` with its own SyncMark:")
    var detailRequests = 0
    var detailTimes: [Duration] = []
    for id in [1, 2, 3, 4, 5, 6, 7, 8, 25] {
        // How long until the detail appears: the request, the fold and its commit, then the
        // snapshot an app's view reads, decoded.
        let start = ContinuousClock.now
        if try await live.refreshIfNeeded(.document("pokemon/\(id)", path: "/api/v2/pokemon/\(id)/", freshness: .http)) != nil { detailRequests += 1 }
        _ = try live.snapshot("pokemon/\(id)").decodeRows(PokemonDetail.self)
        detailTimes.append(ContinuousClock.now - start)
    }
    let sortedTimes = detailTimes.sorted()
    func ms(_ d: Duration) -> String { String(format: "%.1f ms", Double(d.components.attoseconds) / 1e15 + Double(d.components.seconds) * 1000) }
    print("   9 details: \(detailRequests) refreshed, \(9 - detailRequests) still fresh; each on screen (request, fold, snapshot, decode) in median \(ms(sortedTimes[4])), at most \(ms(sortedTimes[8]))")

    print("4. Two favourites, written locally (`localWrite`, never sent):")
    try await live.localWrite("favourites", [
        .upsert(try Row(id: "25", encoding: ["name": "pikachu"])),
        .upsert(try Row(id: "133", encoding: ["name": "eevee"])),
    ])
    print("   favourites: \(try live.snapshot("favourites").rows.map(\.id).joined(separator: ", "))")

    let snapshot = try live.snapshot("pokemon")
    var details: [Int: PokemonDetail] = [:]
    for id in 1...8 {
        if let detail = try live.snapshot("pokemon/\(id)").decodeRows(PokemonDetail.self).first { details[id] = detail }
    }
    print("\n5. What an observer of `pokemon` sees: \(snapshot.rows.count) rows, status \(snapshot.status)")
    for row in snapshot.rows.prefix(8) {
        let entry = try row.decode(PokemonEntry.self)
        let types = details[Int(row.id) ?? 0].map { $0.types.map(\.type.name).joined(separator: "/") } ?? "-"
        print("   #\(row.id.padding(toLength: 4, withPad: " ", startingAt: 0)) \(entry.name.padding(toLength: 12, withPad: " ", startingAt: 0)) \(types)")
    }
    if let mark = snapshot.syncMark {
        print("   SyncMark: fetched at \(describe(mark.fetchedAt)), ETag \(mark.etag ?? "none"), \(mark.pageCount) pages, Cache-Control \(mark.cacheControl ?? "none")")
    }

    try await mutationsDemo(live, server: server)

    print("\n7. The server goes away; the app relaunches offline.")
    server.stop()
    live.close()
    store = nil
    let reopenStart = ContinuousClock.now
    var offlineConfiguration = configuration
    offlineConfiguration.retry = .init(maxAttempts: 3, baseDelay: .milliseconds(200))
    let relaunched = try Store(directory: storeURL, configuration: offlineConfiguration)
    var iterator = relaunched.observe("pokemon").makeAsyncIterator()
    guard let first = try await iterator.next() else { throw DemoFailure(description: "the observation ended early") }
    let reopenTime = elapsed(since: reopenStart)
    print("   first snapshot after reopen: \(first.rows.count) rows in \(reopenTime) — offline, last synced \(describe(first.syncMark?.validatedAt))")
    do {
        try await relaunched.refresh(pokemon)
    } catch {
        print("   a pull-to-refresh now fails after 3 attempts (backoff 0.2 s, 0.4 s): \(error.code)")
        let after = try relaunched.snapshot("pokemon")
        print("   the view still shows \(after.rows.count) rows, status \(after.status)")
    }
    let firstNames = try first.rows.prefix(3).map { try $0.decode(PokemonEntry.self).name }
    print("   first rows from the store: \(firstNames.joined(separator: ", "))")
    relaunched.close()

    print("\nTimings: refresh \(summary == nil ? "none (still fresh)" : syncTime); reopen to first snapshot \(reopenTime).")
    print("Requests the server saw in this run: \(try requestCounts()) (one JSON line each in \(requestLog.path))")
    print("Inspect the log:  swift run -c release freshet dump demo-store   (or: make freshet ARGS=\"dump demo-store\")")
}

do {
    try await run()
} catch {
    FileHandle.standardError.write(Data("demo: \(error)\n".utf8))
    exit(1)
}
