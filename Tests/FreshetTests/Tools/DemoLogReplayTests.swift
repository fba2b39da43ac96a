import Foundation
import Freshet
import FreshetHTTP
import FreshetTesting
import Testing

extension LogToolTests {
    /// `Tests/Fixtures/demo-log.jsonl`: the log of one `freshet-demo` run (28 records: 8 pokemon
    /// pages, 9 detail documents, a favourites write, the todos list, three todo mutations —
    /// confirmed, rolled back with 409, confirmed after going offline — and three failed
    /// attempts), exported with `freshet export demo-store --redact moves,sprites,game_indices,
    /// cries,past_abilities,past_stats,abilities,stats,forms,species,location_area_encounters`.
    @Suite("A demo log replayed in a test")
    struct DemoLogReplayTests {
        static let fixture = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/demo-log.jsonl")

        @Test("the whole demo log imports into a store that verifies and shows what the demo's observer saw last")
        func wholeLog() async throws {
            let log = try ExportedLog(contentsOf: Self.fixture)
            try await withTemporaryDirectory { directory in
                let clock = try log.testClock()
                var configuration = Configuration(durability: .none)
                configuration.sendsMutations = false
                let store = try log.makeStore(in: directory, configuration: configuration,
                                              dependencies: .test(clock: clock, transport: ScriptedTransport(clock: clock)))
                #expect(store.lastLSN == 28)
                let todos = try store.snapshot("todos")
                #expect(todos.rows.count == 20)
                #expect(todos.pendingMutations == [])
                let second = try #require(todos.rows.first { $0.id == "2" })
                struct Todo: Decodable { let title: String; let completed: Bool }
                #expect(try second.decode(Todo.self).title == "written offline at 21:30:06")
                #expect(try todos.rows[0].decode(Todo.self).completed == true)
                let pokemon = try store.snapshot("pokemon")
                #expect(pokemon.rows.count == 151)
                #expect(pokemon.syncMark?.consecutiveFailures == 3)
                #expect(try store.replay().problems == [])
                #expect(try store.verify().problems == [])
                // Before the offline edit (LSN 24), row 2 shows the server's title again after the 409 rollback.
                let beforeOffline = try store.replay(to: .lsn(23), collections: .name("todos"))
                #expect(try beforeOffline.snapshots[0].rows[1].decode(Todo.self).title == "quis ut nam facilis et officia qui")
                store.close()
            }
        }

        @Test("a store built from the demo log at LSN 19 goes on with scripted requests: a 304 revalidates the demo's ETag")
        func continueFromLSN19() async throws {
            let log = try ExportedLog(contentsOf: Self.fixture)
            try await withTemporaryDirectory { directory in
                // 40 s after the todos list arrived: its max-age=30 has run out.
                let clock = try log.testClock(at: 19, after: .seconds(40))
                let transport = ScriptedTransport(clock: clock)
                let now = try log.time(at: 19).addingTimeInterval(40)
                transport.on("/todos", reply: .status(304, headers: ["ETag": #""85a168d44024325cd095a6715045da81""#, "Cache-Control": "max-age=30", "Date": HTTPDate.format(now)]))
                var configuration = Configuration(durability: .none, baseURL: URL(string: "http://demo.invalid"))
                configuration.defaultFreshness = .http
                let store = try log.makeStore(in: directory, through: 19, configuration: configuration,
                                              dependencies: .test(clock: clock, transport: transport))
                defer { store.close() }
                #expect(store.lastLSN == 19)
                let before = try store.snapshot("todos")
                #expect(before.rows.count == 20)
                #expect(before.status == .stale)
                let todos = Resource(collection: "todos", path: "/todos", rows: .rootArray, id: .field("id"))
                try await store.refresh(todos)
                #expect(transport.requests.map { $0.request.headers["If-None-Match"] } == [#""85a168d44024325cd095a6715045da81""#])
                #expect(store.lastLSN == 20)
                let after = try store.snapshot("todos")
                #expect(after.rows == before.rows)
                #expect(after.status == .fresh)
                let records = try store.replay(to: .lsn(20), collections: .name("todos"))
                #expect(records.snapshots.map(\.rows) == [before.rows])
                #expect(try store.verify().problems == [])
            }
        }
    }
}
