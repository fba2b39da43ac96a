import Foundation
import Freshet
import FreshetHTTP
import FreshetTesting
@testable import FreshetLMDB
import Testing
import TestSupport

/// The log-tool suites (Tests/FreshetTests/Tools); `swift test --filter LogToolTests` runs them.
@Suite("Log tools", .scaledTimeLimit(minutes: 2))
enum LogToolTests {}

/// What the store showed after one step of ``withRecordedRun(_:)``: the last LSN and every
/// collection's snapshot at that moment.
struct Checkpoint: Sendable {
    var step: String
    var lsn: LSN
    var snapshots: [Snapshot]
}

/// The freshness policy of the recorded run (its collections' default).
let recordedRunPolicy = FreshnessPolicy.maxAge(.seconds(300))

/// Runs a scripted session against a real store — a fetch, a 304, a local write, a confirmed
/// create, a rolled-back edit, an invalidation, a failed fetch and an edit left pending — on
/// FreshetTesting's test clock and scripted network, snapshotting every collection after each
/// step (what an observer is shown then). Closes the store, then runs `body` with its directory.
func withRecordedRun<R>(_ body: (URL, [Checkpoint]) async throws -> R) async throws -> R {
    let world = MutationWorld()
    world.transport.on("/todos", reply: .json(todosJSON([(1, "one"), (2, "two")]), headers: ["ETag": #""v1""#]),
                       .status(304, headers: ["ETag": #""v1""#]))
    world.transport.on(.post, "/todos", reply: .json(todoJSON(201, "Buy milk"), status: 201))
    world.transport.on(.patch, "/todos/1", reply: .status(409, body: Data(#"{"error":"conflict"}"#.utf8)))
    world.transport.on(.patch, "/todos/2", reply: .fail(.cannotConnect))
    return try await withTemporaryDirectory { directory in
        var configuration = Configuration.test(freshness: recordedRunPolicy)
        configuration.mapSize = 1 << 26
        let store = try Store(directory: directory, configuration: configuration, dependencies: world.dependencies)
        var checkpoints: [Checkpoint] = []
        func checkpoint(_ step: String) throws {
            checkpoints.append(Checkpoint(step: step, lsn: store.lastLSN, snapshots: try store.collections().map { try store.snapshot($0) }))
        }
        try await store.refresh(todosResource)
        try checkpoint("fetched")
        await world.clock.advance(by: .seconds(30))
        try await store.refresh(todosResource)
        try checkpoint("304")
        try await store.localWrite("favourites", [.upsert(row("1", "one"))])
        try checkpoint("local write")
        _ = try await settle(store.mutate(try createTodo("tmp-1", "Buy milk"))).get()
        try checkpoint("create confirmed")
        _ = await settle(try await store.mutate(editTodo("1", title: "uno")))
        try checkpoint("edit rolled back")
        await world.clock.advance(by: .seconds(100))
        try await store.invalidate("todos", reason: "pulled to refresh")
        try checkpoint("invalidated")
        try await store.append(.fetchFailed(.init(url: "http://stub.invalid/todos", reason: "httpStatus", status: 503, message: "answered 503")), to: "todos")
        try checkpoint("fetch failed")
        _ = try await store.mutate(editTodo("2", title: "dos"))
        try checkpoint("edit pending")
        store.close()
        return try await body(directory, checkpoints)
    }
}

/// Opens a closed store's LMDB environment directly, to damage it the way a bad disk would.
func withRawEnvironment<R>(_ directory: URL, _ body: (Environment, [String: Database]) throws -> R) throws -> R {
    let env = try Environment(path: directory.path, mapSize: 1 << 26, maxDatabases: 12, sync: .noSync)
    defer { env.close() }
    var dbs: [String: Database] = [:]
    for name in ["log", "rows", "rowIndex", "marks", "meta", "pending", "mutations", "idMap", "confirmed"] {
        dbs[name] = try env.openDatabase(name, create: false)
    }
    return try body(env, dbs)
}

/// The 8-byte big-endian key of `lsn`.
func lsnKey(_ lsn: UInt64) -> [UInt8] {
    withUnsafeBytes(of: lsn.bigEndian) { Array($0) }
}

/// The `rows` key of a collection's row at `position` (page << 32 | index).
func rowKey(_ collection: String, position: UInt64) -> [UInt8] {
    let name = Array(collection.utf8)
    return [UInt8(name.count >> 8), UInt8(name.count & 0xFF)] + name + lsnKey(position)
}

/// XORs `mask` into the byte `fromEnd` bytes before the end of the log record at `lsn` of a
/// closed store (a damaged record whose CRC-32C no longer matches).
func damageRecord(_ directory: URL, lsn: UInt64, fromEnd: Int, mask: UInt8) throws {
    try withRawEnvironment(directory) { env, dbs in
        try env.write { txn in
            let log = try #require(dbs["log"])
            var bytes = try #require(try txn.get(log, key: lsnKey(lsn)))
            bytes[bytes.count - fromEnd] ^= mask
            try txn.put(log, key: lsnKey(lsn), value: bytes)
        }
    }
}
