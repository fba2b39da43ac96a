import Foundation
import FreshetHTTP
import FreshetTesting
import Synchronization
import Testing
import TestSupport
@testable import Freshet

/// The Server-Sent Events push source against a scripted stream, on the test clock.
@Suite("Server push: EventSource", .scaledTimeLimit(minutes: 1))
struct EventSourceTests {
    static let url = URL(string: "http://stub.invalid/events")!

    static func configuration(_ configure: (inout EventSource.Configuration) -> Void = { _ in }) -> EventSource.Configuration {
        var c = EventSource.Configuration(url: url, source: "todos-sse", resources: [todosResource])
        configure(&c)
        return c
    }

    /// Runs `source` in a task until the test is done with it.
    static func running(_ source: EventSource) -> Task<Result<Void, PushError>, Never> {
        Task {
            do throws(PushError) {
                try await source.run()
                return .success(())
            } catch {
                return .failure(error)
            }
        }
    }

    /// The wait the source chose: the earliest sleeper's deadline less now.
    static func pendingWait(_ clock: FreshetTesting.TestClock) -> Duration? {
        clock.nextDeadline.map { clock.now.duration(to: $0) }
    }

    @Test("change events fold; the reconnection sends Last-Event-ID and waits the server's retry; a replayed event folds nothing")
    func foldAndResume() async throws {
        let world = MutationWorld()
        let streams = ScriptedEventStreams([
            .stream(["retry: 2000\n\n", changeEvent(id: "1", upsertTodos([(1, "one")])), changeEvent(id: "2", upsertTodos([(2, "two")]))]),
            .stream([changeEvent(id: "2", upsertTodos([(2, "two, again")])), changeEvent(id: "3", #"{"collection":"todos","op":"delete","ids":[1, true]}"#),
                      changeEvent(id: "4", #"{"collection":"todos","op":"delete","ids":[1]}"#)]),
        ])
        try await world.withStore { (store: Store) async throws in
            let source = EventSource(store: store, configuration: Self.configuration(), transport: streams)
            let task = Self.running(source)
            await world.clock.waitForSleepers(1)
            #expect(streams.lastEventIDs == [nil])
            #expect(try store.snapshot("todos").rows == [serverTodo(1, "one"), serverTodo(2, "two")])
            // The stream delivered events: the wait is the server's retry (2 s), less jitter.
            let random = SeededRandom.source(seed: 0)
            let expected = source.configuration.delay(failures: 0, reconnection: .seconds(2), random: random.unitInterval())
            #expect(Self.pendingWait(world.clock) == expected)
            #expect(expected >= .seconds(1) && expected <= .seconds(2))

            await world.clock.advance(by: expected)
            await world.clock.waitForSleepers(1)
            #expect(streams.lastEventIDs == [nil, "2"])
            #expect(try store.snapshot("todos").rows == [serverTodo(2, "two")])
            let stats = source.statistics
            #expect(stats.applied == 3)
            #expect(stats.duplicates == 1)
            #expect(stats.malformed == 1)  // a JSON true is no row ID
            #expect(stats.events == 5)
            #expect(stats.connections == 2)
            #expect(try store.pushCursor(source: "todos-sse") == PushCursor(source: "todos-sse", eventID: "4", lsn: LSN(3)))
            #expect(try store.allRecords().count == 3)
            task.cancel()
            #expect(try (await task.value).get() == ())
        }
    }

    @Test("bad input: a stream that never ends folds each event as it comes, never reconnects, and cancelling ends run() with the cursor kept")
    func streamThatNeverEnds() async throws {
        let world = MutationWorld()
        let streams = ScriptedEventStreams([
            .stream([changeEvent(id: "1", upsertTodos([(1, "one")])), ": keep-alive\n\n", changeEvent(id: "2", upsertTodos([(2, "two")]))], then: .open),
        ])
        try await world.withStore { (store: Store) async throws in
            let source = EventSource(store: store, configuration: Self.configuration(), transport: streams)
            let task = Self.running(source)
            try await waitForRows(2, of: "todos", in: store)
            #expect(try store.snapshot("todos").rows == [serverTodo(1, "one"), serverTodo(2, "two")])
            // Still reading the open stream: no reconnection is waiting on the clock.
            #expect(world.clock.sleeperCount == 0)
            #expect(streams.requests.count == 1)
            task.cancel()
            #expect(try (await task.value).get() == ())
            #expect(source.statistics.connections == 1 && source.statistics.applied == 2)
            #expect(try store.pushCursor(source: "todos-sse")?.eventID == "2")
            #expect(try store.allRecords().count == 2)
        }
    }

    @Test("an event for an unknown collection is skipped, counted and reported; the events around it fold")
    func unknownCollection() async throws {
        let world = MutationWorld()
        let streams = ScriptedEventStreams([
            .stream([changeEvent(id: "1", upsertTodos([(1, "one")])), changeEvent(id: "2", upsertTodos([(9, "x")], collection: "photos")),
                     changeEvent(id: "3", upsertTodos([(3, "three")]))]),
        ])
        try await world.withStore { (store: Store) async throws in
            let source = EventSource(store: store, configuration: Self.configuration(), transport: streams)
            let task = Self.running(source)
            await world.clock.waitForSleepers(1)
            #expect(try store.snapshot("todos").rows == [serverTodo(1, "one"), serverTodo(3, "three")])
            #expect(try store.collections() == ["todos"])
            #expect(source.statistics.unknownCollection == 1)
            #expect(source.statistics.applied == 2)
            #expect(source.problems == [PushError(.unknownCollection, #"event "2" changes "photos", which this source has no resource for; skipped"#, eventID: "2")])
            // The stream's last event ID moved past it: a reconnection does not ask for it again.
            #expect(try source.resumeID() == "3")
            task.cancel()
            _ = await task.value
        }
    }

    @Test("a malformed line is ignored and counted, malformed data is skipped and reported; nothing around them is lost")
    func malformedInput() async throws {
        let world = MutationWorld()
        let streams = ScriptedEventStreams([
            .stream([
                "this line has no meaning\n", changeEvent(id: "1", upsertTodos([(1, "one")])),
                changeEvent(id: "2", "not json"),
                changeEvent(id: "3", #"{"collection":"todos","op":"upsert","rows":[{"title":"no id"}]}"#),
                changeEvent(id: "4", #"{"collection":"todos","op":"rename"}"#),
                changeEvent(id: "5", upsertTodos([(5, "x")]), type: "ping"),
                "retry: soon\n", changeEvent(id: "6", upsertTodos([(6, "six")])),
            ]),
        ])
        try await world.withStore { (store: Store) async throws in
            let source = EventSource(store: store, configuration: Self.configuration(), transport: streams)
            let task = Self.running(source)
            await world.clock.waitForSleepers(1)
            #expect(try store.snapshot("todos").rows == [serverTodo(1, "one"), serverTodo(6, "six")])
            let stats = source.statistics
            #expect(stats.ignoredLines == 2)
            #expect(stats.malformed == 3)
            #expect(stats.otherTypes == 1)
            #expect(stats.applied == 2)
            #expect(source.problems.map(\.code) == [.ignoredLine, .malformedEvent, .malformedEvent, .malformedEvent, .ignoredLine])
            #expect(source.problems.map(\.eventID) == [nil, "2", "3", "4", nil])
            #expect(source.problems[1].message == #"event "2": the data is not JSON (8 bytes); skipped"#)
            // A bad retry is ignored: the reconnection time is still the configured 3 s.
            let random = SeededRandom.source(seed: 0)
            #expect(Self.pendingWait(world.clock) == source.configuration.delay(failures: 0, reconnection: .seconds(3), random: random.unitInterval()))
            task.cancel()
            _ = await task.value
        }
    }

    @Test("reconnection backs off exponentially with jitter up to maximumDelay on the test clock: never a tight loop")
    func boundedBackoff() async throws {
        let world = MutationWorld()
        let streams = ScriptedEventStreams([])  // every attempt: cannotConnect
        try await world.withStore { (store: Store) async throws in
            let configuration = Self.configuration {
                $0.reconnectionTime = .seconds(1)
                $0.maximumDelay = .seconds(8)
            }
            let source = EventSource(store: store, configuration: configuration, transport: streams)
            let task = Self.running(source)
            let random = SeededRandom.source(seed: 0)
            var waits: [Duration] = []
            for attempt in 1...8 {
                await world.clock.waitForSleepers(1)
                #expect(streams.requests.count == attempt)
                let wait = try #require(Self.pendingWait(world.clock))
                #expect(wait == configuration.delay(failures: attempt, reconnection: .seconds(1), random: random.unitInterval()))
                waits.append(wait)
                await world.clock.advance(by: wait)
            }
            // 2 s, 4 s, 8 s, then capped at 8 s, each less up to half for jitter.
            let ceilings: [Duration] = [.seconds(2), .seconds(4), .seconds(8), .seconds(8), .seconds(8), .seconds(8), .seconds(8), .seconds(8)]
            for (wait, ceiling) in zip(waits, ceilings) {
                #expect(wait <= ceiling && wait >= ceiling / 2, "wait \(wait), ceiling \(ceiling)")
            }
            // The last advance let the ninth attempt run; it now waits its own backoff.
            await world.clock.waitForSleepers(1)
            #expect(streams.requests.count == 9)
            #expect(source.statistics.connectionFailures == 9)
            #expect(source.statistics.connections == 0)
            task.cancel()
            _ = await task.value
        }
        let floor = EventSource.Configuration(url: Self.url, source: "s", resources: [])
        #expect(floor.delay(failures: 0, reconnection: .zero, random: 0.999) == .milliseconds(250))
        #expect(floor.delay(failures: 100, reconnection: .seconds(3), random: 0) == .seconds(60))
    }

    @Test("a new source resumes from the store's durable cursor")
    func resumesFromStore() async throws {
        let world = MutationWorld()
        let streams = ScriptedEventStreams([.stream([changeEvent(id: "41", upsertTodos([(1, "old")])), changeEvent(id: "42", upsertTodos([(1, "new")]))])])
        try await world.withStore { (store: Store) async throws in
            store.register(todosResource)
            try await store.push([.upsert(serverTodo(1, "before"))], to: "todos", origin: PushOrigin(source: "todos-sse", eventID: "41"))
            let source = EventSource(store: store, configuration: Self.configuration(), transport: streams)
            #expect(try source.resumeID() == "41")
            let task = Self.running(source)
            await world.clock.waitForSleepers(1)
            #expect(streams.lastEventIDs == ["41"])
            #expect(source.statistics.duplicates == 1)
            #expect(try store.snapshot("todos").rows == [serverTodo(1, "new")])
            task.cancel()
            _ = await task.value
        }
    }

    @Test("a configuration that cannot work (bad source name, maximumEventBytes below 1) is invalidConfiguration from run, before any request")
    func invalidConfiguration() async throws {
        let world = MutationWorld()
        try await world.withStore { (store: Store) async throws in
            let cases: [(EventSource.Configuration, String)] = [
                (Self.configuration { $0.source = "" }, #"the source name must be 1 to 200 bytes without control characters, got """#),
                (Self.configuration { $0.source = "a\nb" }, #"the source name must be 1 to 200 bytes without control characters, got "a\nb""#),
                (Self.configuration { $0.source = String(repeating: "s", count: 201) }, "the source name must be 1 to 200 bytes without control characters, got \"\(String(repeating: "s", count: 201))\""),
                (Self.configuration { $0.maximumEventBytes = 0 }, "maximumEventBytes must be at least 1, got 0"),
            ]
            for (configuration, message) in cases {
                let streams = ScriptedEventStreams([.status(204)])
                do throws(PushError) {
                    try await EventSource(store: store, configuration: configuration, transport: streams).run()
                    Issue.record("run returned for \(configuration.source.debugDescription)")
                } catch {
                    #expect(error.code == .invalidConfiguration)
                    #expect(error.message == message)
                }
                #expect(streams.requests.isEmpty)
            }
            #expect(store.lastLSN == .zero)
        }
    }

    @Test("204 ends run; a 404 and a 3xx throw rejected; a 200 that is not text/event-stream throws wrongContentType")
    func terminalAnswers() async throws {
        let world = MutationWorld()
        try await world.withStore { (store: Store) async throws in
            let ended = EventSource(store: store, configuration: Self.configuration(), transport: ScriptedEventStreams([.status(204)]))
            try await ended.run()
            for (status, code) in [(404, PushError.Code.rejected), (302, .rejected), (200, .wrongContentType)] {
                let source = EventSource(store: store, configuration: Self.configuration(), transport: ScriptedEventStreams([.status(status, contentType: "text/html")]))
                do throws(PushError) {
                    try await source.run()
                    Issue.record("run returned for \(status)")
                } catch {
                    #expect(error.code == code)
                    #expect(error.status == status)
                }
            }
            #expect(store.lastLSN == .zero)
        }
    }

    @Test("a 503 and a stream lost mid-way reconnect; credentials go only to the credential origin")
    func retriesAndCredentials() async throws {
        let world = MutationWorld()
        let streams = ScriptedEventStreams([.status(503), .stream([changeEvent(id: "1", upsertTodos([(1, "one")]))], then: .fail(.connectionLost)),
                                            .stream([changeEvent(id: "2", upsertTodos([(2, "two")]))])])
        try await world.withStore(configure: { $0.authentication = .init(token: { "secret" }, refresh: {}) }) { (store: Store) async throws in
            let source = EventSource(store: store, configuration: Self.configuration(), transport: streams)
            let task = Self.running(source)
            for _ in 0..<2 {
                await world.clock.waitForSleepers(1)
                await world.clock.advance(by: try #require(Self.pendingWait(world.clock)))
            }
            await world.clock.waitForSleepers(1)
            #expect(streams.lastEventIDs == [nil, nil, "1"])
            #expect(try store.snapshot("todos").rows.map(\.id) == ["1", "2"])
            #expect(source.statistics.connectionFailures == 2)
            #expect(streams.requests.allSatisfy { $0.headers["Authorization"] == "Bearer secret" && $0.headers["Accept"] == "text/event-stream" })
            task.cancel()
            _ = await task.value

            var elsewhere = Self.configuration()
            elsewhere.url = URL(string: "http://other.invalid/events")!
            let foreign = ScriptedEventStreams([.status(204)])
            try await EventSource(store: store, configuration: elsewhere, transport: foreign).run()
            let request = try #require(foreign.requests.first)
            #expect(request.headers["Authorization"] == nil)
            #expect(request.headers.fields.map(\.name) == ["Accept", "Cache-Control", "Last-Event-ID"])
        }
    }

    @Test("a 401 renews the token once and connects again at once; a second 401 throws rejected")
    func renewsToken() async throws {
        let world = MutationWorld()
        let renewals = Mutex(0)
        let streams = ScriptedEventStreams([.status(401), .stream([changeEvent(id: "1", upsertTodos([(1, "one")]))])])
        try await world.withStore(configure: { configuration in
            configuration.authentication = .init(token: { "t\(renewals.withLock { $0 })" }, refresh: { renewals.withLock { $0 += 1 } })
        }) { (store: Store) async throws in
            let source = EventSource(store: store, configuration: Self.configuration(), transport: streams)
            let task = Self.running(source)
            await world.clock.waitForSleepers(1)
            #expect(streams.requests.map { $0.headers["Authorization"] } == ["Bearer t0", "Bearer t1"])
            #expect(source.statistics.connectionFailures == 0)
            #expect(try store.snapshot("todos").rows == [serverTodo(1, "one")])
            task.cancel()
            _ = await task.value

            let refused = EventSource(store: store, configuration: Self.configuration(), transport: ScriptedEventStreams([.status(401), .status(401)]))
            do throws(PushError) {
                try await refused.run()
                Issue.record("run returned after two 401s")
            } catch {
                #expect(error.code == .rejected)
                #expect(error.status == 401)
            }
            #expect(renewals.withLock { $0 } == 2)
        }
    }

    @Test("a 503 with Retry-After waits at least that long, at most maximumDelay")
    func retryAfter() async throws {
        let world = MutationWorld()
        let streams = ScriptedEventStreams([.status(503, headers: ["Retry-After": "20"]), .status(429, headers: ["Retry-After": "3600"])])
        try await world.withStore { (store: Store) async throws in
            let source = EventSource(store: store, configuration: Self.configuration(), transport: streams)
            let task = Self.running(source)
            await world.clock.waitForSleepers(1)
            #expect(Self.pendingWait(world.clock) == .seconds(20))
            await world.clock.advance(by: .seconds(20))
            await world.clock.waitForSleepers(1)
            #expect(Self.pendingWait(world.clock) == .seconds(60))
            #expect(streams.requests.count == 2)
            task.cancel()
            _ = await task.value
        }
    }
}
