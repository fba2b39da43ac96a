import Foundation
import FreshetHTTP
import FreshetTesting
import Testing
import TestSupport
@testable import Freshet

/// Server push over a real loopback connection: the fixture server's `GET /events` stream,
/// the live `URLSessionEventStreamTransport`, reconnection on the test clock.
@Suite("Server push: SSE from the fixture server", .scaledTimeLimit(minutes: 2))
struct EventSourceFixtureServerTests {
    /// Sends one request to the fixture server (the change the test makes), checks its status.
    static func send(_ method: HTTPMethod, _ path: String, _ body: String? = nil, to server: FixtureServer, expect status: Int) async throws {
        var request = HTTPRequest(method: method, url: server.baseURL.appendingPathComponent(path), body: body.map { Data($0.utf8) })
        request.headers.set(name: "Content-Type", value: "application/json")
        let response = try await URLSessionTransport().send(request)
        #expect(response.status == status, "\(method) \(path)")
    }

    /// The origins of the store's `changed` events, in LSN order.
    static func pushedIDs(_ store: Store) throws -> [String] {
        try store.allRecords().compactMap { record in
            if case .changed(let c) = record.event { return c.origin?.eventID ?? "none" }
            return nil
        }
    }

    @Test("a change made on the server reaches an observer over SSE; a dropped stream resumes from Last-Event-ID with nothing lost or doubled")
    func dropAndResume() async throws {
        try await FixtureServer.withRunning { server in
            let clock = FreshetTesting.TestClock()
            let dependencies = Dependencies(now: clock.dateSource, clock: clock, random: SeededRandom.source(seed: 0), transport: URLSessionTransport())
            try await withTemporaryStore(configuration: .test(baseURL: server.baseURL, freshness: .manual), dependencies: dependencies) { store in
                try await store.refresh(todosResource)
                #expect(try store.snapshot("todos").rows.count == 200)
                let configuration = EventSource.Configuration(url: server.baseURL.appendingPathComponent("events"), source: "fixture", resources: [todosResource])
                let source = EventSource(store: store, configuration: configuration, transport: URLSessionEventStreamTransport())
                let running = Task { try await source.run() }

                // 1. A PATCH on the server reaches the observer through the stream.
                let patched = recordSnapshots(store.observe("todos")) { snapshot in
                    snapshot.rows.first.map { (try? title(of: $0)) == "patched over SSE" } ?? false
                }
                try await Self.send(.patch, "todos/1", #"{"title":"patched over SSE"}"#, to: server, expect: 200)
                _ = try await patched.value
                #expect(try Self.pushedIDs(store) == ["1"])

                // 2. The server drops the stream; the source waits its backoff on the test clock.
                _ = try await server.control(["sse_drop": true])
                await clock.waitForSleepers(1)

                // 3. Changes made while it is away.
                try await Self.send(.post, "todos", #"{"title":"made while away","completed":false,"userId":1}"#, to: server, expect: 201)
                try await Self.send(.delete, "todos/2", to: server, expect: 200)
                try await Self.send(.patch, "todos/3", #"{"completed":true}"#, to: server, expect: 200)

                // 4. The reconnection asks for what came after event 1 and gets exactly that.
                let resumed = recordSnapshots(store.observe("todos")) { snapshot in
                    snapshot.rows.last?.id == "201" && !snapshot.rows.contains { $0.id == "2" }
                        && snapshot.rows.first { $0.id == "3" }.map { String(decoding: $0.json, as: UTF8.self).contains(#""completed":true"#) } == true
                }
                await clock.advance(by: try #require(clock.nextDeadline.map { clock.now.duration(to: $0) }))
                let final = try #require(try await resumed.value.last)
                #expect(final.rows.count == 200)
                #expect(final.rows.last == Row(id: "201", json: Data(#"{"completed":false,"id":201,"title":"made while away","userId":1}"#.utf8)))
                #expect(try Self.pushedIDs(store) == ["1", "2", "3", "4"])
                let streams = try await server.requests().filter { $0.path.hasPrefix("/events") }
                #expect(streams.map { $0.header("Last-Event-ID") } == [nil, "1"])
                #expect(source.statistics.applied == 4)
                #expect(source.statistics.duplicates == 0)
                #expect(source.statistics.connections == 2)
                running.cancel()
                try await running.value

                // 5. A source made after a relaunch resumes from the durable cursor: event 4.
                #expect(try store.pushCursor(source: "fixture")?.eventID == "4")
                let again = EventSource(store: store, configuration: configuration, transport: URLSessionEventStreamTransport())
                let second = Task { try await again.run() }
                let touched = recordSnapshots(store.observe("todos")) { snapshot in
                    snapshot.rows.first.map { (try? title(of: $0)) == "after relaunch" } ?? false
                }
                try await Self.send(.patch, "todos/1", #"{"title":"after relaunch"}"#, to: server, expect: 200)
                _ = try await touched.value
                second.cancel()
                try await second.value
                let all = try await server.requests().filter { $0.path.hasPrefix("/events") }
                #expect(all.map { $0.header("Last-Event-ID") } == [nil, "1", "4"])
                #expect(try Self.pushedIDs(store) == ["1", "2", "3", "4", "5"])
                #expect(again.statistics.applied == 1)
                #expect(again.statistics.duplicates == 0)
                #expect(try store.verify().isOK)
            }
        }
    }
}
