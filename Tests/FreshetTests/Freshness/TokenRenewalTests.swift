import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Synchronization
import Testing
import TestSupport

/// A token provider whose renewal is itself a request (`POST /oauth/token`) to the scripted
/// server, so a test can hold it at a gate; it hands out `old` until a renewal succeeds, then
/// `new1`, `new2`, … and counts the renewals.
final class RotatingTokens: Sendable {
    private let state = Mutex((renewals: 0, token: "old"))
    let transport: ScriptedTransport

    init(transport: ScriptedTransport) { self.transport = transport }

    var renewals: Int { state.withLock { $0.renewals } }

    var authentication: Configuration.Authentication {
        Configuration.Authentication(
            token: { [self] in state.withLock { $0.token } },
            refresh: { [self] in
                let n = state.withLock { s in
                    s.renewals += 1
                    return s.renewals
                }
                let response = try await transport.send(HTTPRequest(method: .post, url: URL(string: "https://api.test/oauth/token")!, headers: [:]))
                guard response.status == 200 else { throw TokenRenewalFailed(status: response.status) }
                state.withLock { $0.token = "new\(n)" }
            }
        )
    }
}

struct TokenRenewalFailed: Error, Equatable {
    var status: Int
}

@Suite("One token renewal for concurrent 401s", .scaledTimeLimit(minutes: 1))
struct TokenRenewalTests {
    static func configuration(_ tokens: RotatingTokens) -> Configuration {
        var configuration = Configuration.scripted()
        configuration.authentication = tokens.authentication
        return configuration
    }

    /// The `Authorization` values the API saw (the token endpoint left out), sorted: the
    /// comparison ignores order and keeps counts.
    static func apiAuthorizations(_ transport: ScriptedTransport) -> [String] {
        transport.requests.filter { !$0.request.url.path.hasPrefix("/oauth") }.map { $0.request.headers["Authorization"] ?? "none" }.sorted()
    }

    /// Answers `Bearer old` with 401 (held at `expired` until the test lets them through) and
    /// `Bearer new1` with the rows or the confirmation; the token endpoint is held at `renewal`.
    static func script(_ transport: ScriptedTransport, expired: Gate, renewal: Gate) {
        let unauthorized = ScriptedTransport.Reply.status(401, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])
        transport.on(where: { $0.headers["Authorization"] == "Bearer old" }, reply: .held(expired, then: unauthorized))
        transport.on(where: { $0.headers["Authorization"] == "Bearer new1" && $0.url.path == "/items" }, reply: ItemsFixture.reply(["a"]))
        transport.on(where: { $0.headers["Authorization"] == "Bearer new1" && $0.url.path == "/others" }, reply: ItemsFixture.reply(["x", "y"]))
        transport.on(where: { $0.headers["Authorization"] == "Bearer new1" && $0.method == .patch }, reply: .json(#"{"id":"t1","title":"renamed"}"#))
        transport.on(.post, "/oauth/token", reply: .held(renewal, then: .status(200)))
    }

    static let items = ItemsFixture.resource(.maxAge(.seconds(60)))
    static let others = ItemsFixture.resource(.maxAge(.seconds(60)), collection: "others", path: "/others")

    /// `PATCH /todos/t1`, shown at once as the renamed row; confirmed by any 2xx.
    static let rename = Mutation(name: "rename", ops: [.upsert(Row(id: "t1", json: Data(#"{"id":"t1","title":"renamed"}"#.utf8)), in: "todos")],
                                 request: .init(method: .patch, path: "/todos/t1", body: Data(#"{"title":"renamed"}"#.utf8)), confirmation: Mutation.Confirmation.none)

    @Test("two collections and a mutation get 401 with an expired token: one renewal, and each request is sent once with the old token and once with the new")
    func oneRenewalForConcurrent401s() async throws {
        let clock = KitClock()
        let transport = ScriptedTransport(clock: clock)
        let tokens = RotatingTokens(transport: transport)
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: Self.configuration(tokens),
                                  dependencies: Dependencies.test(clock: clock, transport: transport, seed: 0))
            defer { store.close() }
            let expired = Gate()
            let renewal = Gate()
            Self.script(transport, expired: expired, renewal: renewal)
            store.register(ItemsFixture.resource(collection: "todos", path: "/todos"))

            let items = Task { try await store.refresh(Self.items) }
            let others = Task { try await store.refresh(Self.others) }
            let pending = try await store.mutate(Self.rename)
            // All three are at the server with the old token before any 401 comes back.
            await expired.waitUntilReached(3)
            expired.release()
            // The first 401 starts the renewal; the two others find it running and wait for it.
            await renewal.waitUntilReached(1)
            while store.tokenRenewal.joinedCount < 2, !Task.isCancelled { await Task.yield() }
            renewal.release()

            let summaries = [try await items.value, try await others.value]
            #expect(summaries.map(\.rows) == [1, 2])
            let outcome = try await pending.outcome()
            #expect(outcome.status == 200)
            #expect(tokens.renewals == 1)
            #expect(store.tokenRenewal.joinedCount == 2)
            #expect(Self.apiAuthorizations(transport) == ["Bearer new1", "Bearer new1", "Bearer new1", "Bearer old", "Bearer old", "Bearer old"])
            #expect(transport.requests.filter { $0.request.url.path == "/oauth/token" }.count == 1)
            let sent = transport.requests.filter { !$0.request.url.path.hasPrefix("/oauth") }.map { "\($0.request.method.rawValue) \($0.request.url.path)" }.sorted()
            #expect(sent == ["GET /items", "GET /items", "GET /others", "GET /others", "PATCH /todos/t1", "PATCH /todos/t1"])
            #expect(try store.pendingMutations().isEmpty)
        }
    }

    @Test("a 401 to a request sent with a token older than the current one is retried with the current token, without another renewal")
    func olderTokenRetriesWithoutRenewal() async throws {
        let clock = KitClock()
        let transport = ScriptedTransport(clock: clock)
        let tokens = RotatingTokens(transport: transport)
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: Self.configuration(tokens),
                                  dependencies: Dependencies.test(clock: clock, transport: transport, seed: 0))
            defer { store.close() }
            let first = Gate()
            let second = Gate()
            let unauthorized = ScriptedTransport.Reply.status(401)
            transport.on(where: { $0.headers["Authorization"] == "Bearer old" && $0.url.path == "/items" }, reply: .held(first, then: unauthorized))
            transport.on(where: { $0.headers["Authorization"] == "Bearer old" && $0.url.path == "/others" }, reply: .held(second, then: unauthorized))
            transport.on(where: { $0.headers["Authorization"] == "Bearer new1" }, reply: ItemsFixture.reply(["a"]))
            transport.on(.post, "/oauth/token", reply: .status(200))

            let items = Task { try await store.refresh(Self.items) }
            let others = Task { try await store.refresh(Self.others) }
            await first.waitUntilReached(1)
            await second.waitUntilReached(1)
            // /items gets its 401, renews, and is answered with the new token …
            first.release()
            _ = try await items.value
            // … then /others, sent with the old token before the renewal, gets its 401.
            second.release()
            _ = try await others.value
            #expect(tokens.renewals == 1)
            #expect(store.tokenRenewal.joinedCount == 0)
            #expect(Self.apiAuthorizations(transport) == ["Bearer new1", "Bearer new1", "Bearer old", "Bearer old"])
            #expect(transport.requests.map(\.description).filter { $0.hasPrefix("POST") } == ["POST /oauth/token"])
        }
    }

    @Test("a renewal that fails fails every request that waited for it, once; the next 401 renews again")
    func failedRenewalIsShared() async throws {
        let clock = KitClock()
        let transport = ScriptedTransport(clock: clock)
        let tokens = RotatingTokens(transport: transport)
        var configuration = Self.configuration(tokens)
        configuration.retry = .init(maxAttempts: 1)
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: configuration,
                                  dependencies: Dependencies.test(clock: clock, transport: transport, seed: 0))
            defer { store.close() }
            let expired = Gate()
            let renewal = Gate()
            transport.on(where: { $0.headers["Authorization"] == "Bearer old" }, reply: .held(expired, then: .status(401)))
            transport.on(where: { $0.headers["Authorization"] == "Bearer new2" }, reply: ItemsFixture.reply(["a"]))
            transport.on(.post, "/oauth/token", reply: .held(renewal, then: .status(400)), .status(200))

            let items = Task { try await store.refresh(Self.items) }
            let others = Task { try await store.refresh(Self.others) }
            await expired.waitUntilReached(2)
            expired.release()
            await renewal.waitUntilReached(1)
            while store.tokenRenewal.joinedCount < 1, !Task.isCancelled { await Task.yield() }
            renewal.release()
            let errors = [await expectFetchError(of: items), await expectFetchError(of: others)]
            #expect(errors.map { $0?.status } == [401, 401])
            #expect(errors.allSatisfy { $0?.message.contains("renewing the token failed") == true })
            #expect(tokens.renewals == 1)

            // The failed renewal is over: the next 401 renews again, and succeeds.
            let again = try await store.refresh(Self.items)
            #expect(again.rows == 1)
            #expect(tokens.renewals == 2)
            #expect(Self.apiAuthorizations(transport) == ["Bearer new2", "Bearer old", "Bearer old", "Bearer old"])
        }
    }
}
