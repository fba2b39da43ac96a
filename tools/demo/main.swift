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

@MainActor
func run() async throws {
    let server = try FixtureServer.start(requestLog: requestLog)
    print("Fixture server (real PokeAPI data, 151 pokemon) on \(server.baseURL.absoluteString)")
    print("Store: \(storeURL.path)\n")

    var configuration = Configuration(durability: .full, baseURL: server.baseURL)
    configuration.defaultMaxAge = .seconds(60)
    var store: Store? = try Store(directory: storeURL, configuration: configuration)
    guard let live = store else { return }

    let before = try live.snapshot("pokemon")
    if before.rows.isEmpty {
        print("1. The store is empty: an observer's first snapshot has 0 rows (status \(before.status)).")
    } else {
        print("1. From an earlier run, an observer sees \(before.rows.count) rows at once, before any network (status \(before.status)).")
    }

    // The view: observes the projection, never the network.
    let progress = Task { @MainActor in
        var lastCount = -1
        for try await snapshot in live.observe("pokemon") {
            guard snapshot.rows.count != lastCount else { continue }
            lastCount = snapshot.rows.count
            let pages = snapshot.syncMark?.pageCount ?? 0
            print("   observer: \(snapshot.rows.count) rows, \(pages) page\(pages == 1 ? "" : "s"), LSN \(snapshot.lsn)")
        }
    }

    print("2. Full sync of /api/v2/pokemon/ in pages of 20 (following `next`):")
    let syncStart = ContinuousClock.now
    let summary = try await live.refresh(.list("pokemon", path: "/api/v2/pokemon/", query: ["limit": "20"]))
    let syncTime = elapsed(since: syncStart)
    print("   synced \(summary.rows) pokemon in \(summary.pages) pages in \(syncTime) (last LSN \(summary.lsn))")
    progress.cancel()

    print("3. Details of a few pokemon, each upserted into `pokemon-detail`:")
    for id in [1, 4, 7, 25, 133] {
        try await live.refresh(.document("pokemon-detail", path: "/api/v2/pokemon/\(id)/"))
    }
    print("   \(try live.snapshot("pokemon-detail").rows.count) detail rows")

    print("4. Two favourites, written locally (`localWrite`, never sent):")
    try await live.localWrite("favourites", [
        .upsert(try Row(id: "25", encoding: ["name": "pikachu"])),
        .upsert(try Row(id: "133", encoding: ["name": "eevee"])),
    ])
    print("   favourites: \(try live.snapshot("favourites").rows.map(\.id).joined(separator: ", "))")

    let snapshot = try live.snapshot("pokemon")
    let details = Dictionary(uniqueKeysWithValues: try live.snapshot("pokemon-detail").decodeRows(PokemonDetail.self).map { ($0.id, $0) })
    print("\n5. What an observer of `pokemon` sees: \(snapshot.rows.count) rows, status \(snapshot.status)")
    for row in snapshot.rows.prefix(8) {
        let entry = try row.decode(PokemonEntry.self)
        let types = details[Int(row.id) ?? 0].map { $0.types.map(\.type.name).joined(separator: "/") } ?? "-"
        print("   #\(row.id.padding(toLength: 4, withPad: " ", startingAt: 0)) \(entry.name.padding(toLength: 12, withPad: " ", startingAt: 0)) \(types)")
    }
    if let mark = snapshot.syncMark {
        print("   SyncMark: fetched at \(describe(mark.fetchedAt)), ETag \(mark.etag ?? "none"), \(mark.pageCount) pages, Cache-Control \(mark.cacheControl ?? "none")")
    }

    print("\n6. The server goes away; the app relaunches offline.")
    server.stop()
    live.close()
    store = nil
    let reopenStart = ContinuousClock.now
    let relaunched = try Store(directory: storeURL, configuration: configuration)
    var iterator = relaunched.observe("pokemon").makeAsyncIterator()
    guard let first = try await iterator.next() else { throw DemoFailure(description: "the observation ended early") }
    let reopenTime = elapsed(since: reopenStart)
    print("   first snapshot after reopen: \(first.rows.count) rows in \(reopenTime) — offline, last synced \(describe(first.syncMark?.validatedAt))")
    do {
        try await relaunched.refresh(.list("pokemon", path: "/api/v2/pokemon/", query: ["limit": "20"]))
    } catch {
        print("   a refresh now fails (\(error.code): \(error.message));")
        let after = try relaunched.snapshot("pokemon")
        if case .failed(let failure, let lastSynced) = after.status {
            print("   the view still shows \(after.rows.count) rows, status failed (\(failure.reason)), last synced \(describe(lastSynced))")
        }
    }
    let firstNames = try first.rows.prefix(3).map { try $0.decode(PokemonEntry.self).name }
    print("   first rows from the store: \(firstNames.joined(separator: ", "))")
    relaunched.close()

    print("\nTimings: full sync \(syncTime); reopen to first snapshot \(reopenTime).")
    print("Requests the server saw: \(requestLog.path)")
    print("Inspect the log:  swift run freshet dump demo-store")
}

do {
    try await run()
} catch {
    FileHandle.standardError.write(Data("demo: \(error)\n".utf8))
    exit(1)
}
