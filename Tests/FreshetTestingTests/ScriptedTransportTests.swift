import Foundation
import FreshetHTTP
import FreshetTesting
import Testing

@Suite("ScriptedTransport")
struct ScriptedTransportTests {
    @Test("a route's replies are used in order and the last one repeats")
    func repliesInOrderThenRepeat() async throws {
        let transport = ScriptedTransport()
        transport.on("/items", reply: .status(503, headers: ["Retry-After": "2"]), .json(#"[{"id":"1"}]"#))
        let sent = try request("/items")

        let first = try await transport.send(sent)
        #expect(first == HTTPResponse(status: 503, headers: ["Retry-After": "2"], url: sent.url, duration: .zero))
        for _ in 0..<2 {
            let again = try await transport.send(sent)
            #expect(again.status == 200)
            #expect(text(again) == #"[{"id":"1"}]"#)
            #expect(again.headers == ["Content-Type": "application/json"])
            #expect(again.url == sent.url)
            #expect(again.duration == .zero)
        }
        #expect(transport.requests.map(\.description) == ["GET /items", "GET /items", "GET /items"])
    }

    @Test("json keeps a Content-Type the script gave")
    func jsonKeepsContentType() async throws {
        let transport = ScriptedTransport()
        transport.on("/problem", reply: .json(#"{"title":"nope"}"#, status: 422, headers: ["Content-Type": "application/problem+json"]))
        let response = try await transport.send(try request("/problem"))
        #expect(response.status == 422)
        #expect(response.headers == ["Content-Type": "application/problem+json"])
    }

    @Test("the most recently declared matching route answers")
    func laterRouteWins() async throws {
        let transport = ScriptedTransport()
        transport.on("/items", reply: .status(200))
        transport.on(where: { $0.url.path() == "/items" }, reply: .status(500))
        #expect(try await transport.send(try request("/items")).status == 500)
        transport.on("/items", reply: .status(304))
        #expect(try await transport.send(try request("/items")).status == 304)
    }

    @Test("query items match in any order, after percent-decoding, but must all be there")
    func queryOrderInsensitive() async throws {
        let transport = ScriptedTransport()
        transport.on("/api/v2/pokemon?limit=20&offset=40&q=mr mime", reply: .status(200))
        #expect(try await transport.send(try request("/api/v2/pokemon?offset=40&q=mr%20mime&limit=20")).status == 200)
        #expect(try await transport.send(try request("/api/v2/pokemon?q=mr%20mime&limit=20&offset=40")).status == 200)
        #expect(await failure(transport, try request("/api/v2/pokemon?limit=20&offset=40")) == .other)
        #expect(await failure(transport, try request("/api/v2/pokemon?limit=20&offset=40&q=mr%20mime&x=1")) == .other)
        #expect(await failure(transport, try request("/api/v2/pokemon")) == .other)
    }

    @Test("the method must match; GET is the default")
    func methodMatters() async throws {
        let transport = ScriptedTransport()
        transport.on(.post, "/favourites", reply: .status(201))
        transport.on("/favourites", reply: .json("[]"))
        #expect(try await transport.send(try request("/favourites", method: .post)).status == 201)
        #expect(try await transport.send(try request("/favourites")).status == 200)
        #expect(await failure(transport, try request("/favourites", method: .delete)) == .other)
    }

    @Test("an unmatched request throws a TransportError naming it, and is recorded")
    func unmatchedRequest() async throws {
        let transport = ScriptedTransport()
        transport.on("/items", reply: .status(200))
        transport.on(where: { $0.method == .put }, reply: .status(204))
        let sent = try request("/missing?x=1")
        let error = await #expect(throws: TransportError.self) { try await transport.send(sent) }
        #expect(error == TransportError(
            code: .other,
            message: "no scripted reply for GET /missing?x=1; routes, newest last: GET /items, a where: predicate",
            request: sent
        ))
        #expect(transport.requests == [ScriptedTransport.Recorded(request: sent, matched: false)])
    }

    @Test("a fail reply throws its code and message for that request")
    func failReply() async throws {
        let transport = ScriptedTransport()
        transport.on("/items", reply: .fail(.cannotConnect, message: "connection refused"), .status(200))
        let sent = try request("/items")
        let error = await #expect(throws: TransportError.self) { try await transport.send(sent) }
        #expect(error == TransportError(code: .cannotConnect, message: "connection refused", request: sent))
        #expect(try await transport.send(sent).status == 200)
    }

    @Test("held replies answer in the order their gates are released")
    func heldGateOrdering() async throws {
        let transport = ScriptedTransport()
        let first = Gate()
        let second = Gate()
        transport.on("/slow", reply: .held(first, then: .json(#""first""#)), .held(second, then: .json(#""second""#)))
        let arrivals = EventLog<String>()
        let sent = try request("/slow")

        let firstTask = Task { arrivals.append(text(try await transport.send(sent))) }
        await first.waitUntilReached()
        let secondTask = Task { arrivals.append(text(try await transport.send(sent))) }
        await second.waitUntilReached()
        #expect(first.waitingCount == 1 && second.waitingCount == 1)

        second.release()
        try await secondTask.value
        #expect(arrivals.all == [#""second""#])
        #expect(first.waitingCount == 1)

        first.release()
        try await firstTask.value
        #expect(arrivals.all == [#""second""#, #""first""#])
        #expect(first.reachedCount == 1 && second.reachedCount == 1)
    }

    @Test("a released gate lets later requests straight through")
    func releasedGatePasses() async throws {
        let transport = ScriptedTransport()
        let gate = Gate()
        gate.release()
        transport.on("/open", reply: .held(gate, then: .status(204)))
        #expect(try await transport.send(try request("/open")).status == 204)
        #expect(gate.reachedCount == 1 && gate.waitingCount == 0 && gate.isReleased)
    }

    @Test("cancelling a request held at a gate throws TransportError.cancelled")
    func cancellationWhileHeld() async throws {
        let transport = ScriptedTransport()
        let gate = Gate()
        transport.on("/slow", reply: .held(gate, then: .status(200)))
        let sent = try request("/slow")
        let task = Task { try await transport.send(sent) }
        await gate.waitUntilReached()
        task.cancel()
        let error = await #expect(throws: TransportError.self) { try await task.value }
        #expect(error == TransportError(code: .cancelled, message: "request cancelled", request: sent))
        #expect(gate.waitingCount == 0)
    }

    @Test("waitForRequests returns once that many requests have arrived")
    func waitForRequests() async throws {
        let transport = ScriptedTransport()
        transport.on("/a", reply: .status(200))
        let waiter = Task {
            await transport.waitForRequests(2)
            return transport.requests.count
        }
        _ = try await transport.send(try request("/a"))
        #expect(await failure(transport, try request("/b")) == .other)
        #expect(await waiter.value == 2)
        await transport.waitForRequests(1)
        #expect(transport.requests.map(\.description) == ["GET /a", "GET /b"])
        #expect(transport.requests.map(\.matched) == [true, false])
    }

    @Test("recorded requests carry the test clock's time of arrival")
    func recordsClockTime() async throws {
        let clock = TestClock()
        let transport = ScriptedTransport(clock: clock)
        transport.on("/a", reply: .status(200))
        _ = try await transport.send(try request("/a"))
        await clock.advance(by: .seconds(5))
        _ = try await transport.send(try request("/a"))
        #expect(transport.requests.map(\.instant) == [.zero, TestClock.Instant(offset: .seconds(5))])
        #expect(transport.requests.map(\.date) == [Date(timeIntervalSince1970: 1_767_225_600), Date(timeIntervalSince1970: 1_767_225_605)])
    }

    @Test("reset forgets routes and requests; removeRequests keeps the routes")
    func reset() async throws {
        let transport = ScriptedTransport()
        transport.on("/a", reply: .status(500), .status(200))
        #expect(try await transport.send(try request("/a")).status == 500)
        transport.removeRequests()
        #expect(transport.requests.isEmpty)
        #expect(try await transport.send(try request("/a")).status == 200)
        transport.reset()
        #expect(transport.requests.isEmpty)
        #expect(await failure(transport, try request("/a")) == .other)
    }

    @Test("a retry loop on the test clock sends at the exact backoff instants")
    func retryWithBackoff() async throws {
        let clock = TestClock()
        let transport = ScriptedTransport(clock: clock)
        transport.on("/items", reply: .status(503), .status(503), .json("[]"))
        let sent = try request("/items")
        let client = Task {
            var delay = Duration.seconds(1)
            while true {
                let response = try await transport.send(sent)
                if response.status == 200 { return clock.now }
                try await clock.sleep(for: delay)
                delay *= 2
            }
        }
        await clock.waitForSleepers(1)
        #expect(transport.requests.count == 1)
        await clock.advance(by: .seconds(1))
        await clock.waitForSleepers(1)
        #expect(transport.requests.count == 2)
        await clock.advance(by: .seconds(2))
        #expect(try await client.value == TestClock.Instant(offset: .seconds(3)))
        #expect(transport.requests.map(\.instant) == [0, 1, 3].map { TestClock.Instant(offset: .seconds($0)) })
    }
}
