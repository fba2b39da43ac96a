import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Synchronization
import Testing
import TestSupport

/// A bearer-token source for tests: hands out `tokens[n]` after `n` renewals, counting calls.
final class TokenSource: Sendable {
    private let state = Mutex((index: 0, tokenCalls: 0, refreshCalls: 0))
    let tokens: [String]

    init(_ tokens: [String]) { self.tokens = tokens }

    var tokenCalls: Int { state.withLock { $0.tokenCalls } }
    var refreshCalls: Int { state.withLock { $0.refreshCalls } }

    var authentication: Configuration.Authentication {
        Configuration.Authentication(
            token: { [self] in
                state.withLock { s in
                    s.tokenCalls += 1
                    return tokens[min(s.index, tokens.count - 1)]
                }
            },
            refresh: { [self] in
                state.withLock { s in
                    s.refreshCalls += 1
                    s.index += 1
                }
            }
        )
    }
}

@Suite("The requests a refresh sends", .scaledTimeLimit(minutes: 1))
struct HTTPClientTests {
    static func configuration(_ tokens: TokenSource?, timeout: Duration? = nil) -> Configuration {
        var configuration = Configuration.scripted()
        configuration.authentication = tokens?.authentication
        configuration.requestTimeout = timeout
        return configuration
    }

    @Test("the token is sent as Authorization: Bearer t1")
    func bearerToken() async throws {
        let tokens = TokenSource(["t1", "t2"])
        try await withScriptedStore(Self.configuration(tokens)) { h in
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]))
            try await h.store.refresh(ItemsFixture.resource())
            #expect(h.header("Authorization") == ["Bearer t1"])
            #expect(tokens.tokenCalls == 1)
            #expect(tokens.refreshCalls == 0)
        }
    }

    @Test("a 401 renews the token exactly once and retries once with Bearer t2; the log never holds a token")
    func renewOn401() async throws {
        let tokens = TokenSource(["t1", "t2"])
        try await withScriptedStore(Self.configuration(tokens)) { h in
            h.transport.on(where: { $0.headers["Authorization"] == "Bearer t1" }, reply: .status(401, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#]))
            h.transport.on(where: { $0.headers["Authorization"] == "Bearer t2" }, reply: ItemsFixture.reply(["a", "b"]))
            let summary = try await h.store.refresh(ItemsFixture.resource())
            #expect(summary == RefreshSummary(pages: 1, notModified: 0, rows: 2, lsn: 1))
            #expect(h.header("Authorization") == ["Bearer t1", "Bearer t2"])
            #expect(h.transport.requests.map(\.description) == ["GET /items", "GET /items"])
            #expect(tokens.refreshCalls == 1)
            #expect(tokens.tokenCalls == 2)
            #expect(h.requestOffsets == [0, 0])
            // The renewal is part of one attempt: no fetchFailed for the 401.
            let records = try h.store.allRecords()
            #expect(records.map(\.kind) == [.fetched])

            // Neither the record bytes nor `freshet dump --json` hold a token.
            for record in records {
                let bytes = record.encoded()
                for secret in ["Bearer", "t1", "t2", "Authorization"] {
                    #expect(!bytes.containsBytes(Array(secret.utf8)), "record \(record.lsn) holds \(secret)")
                }
            }
            let dump = h.dumpJSON()
            #expect(dump.status == 0)
            #expect(dump.stdout.count == 1)
            for line in dump.stdout {
                for secret in ["Bearer", "t1", "t2", "Authorization"] {
                    #expect(!line.contains(secret), "dump line holds \(secret): \(line)")
                }
            }
        }
    }

    @Test("a second 401 after renewing fails with httpStatus 401: one renewal, two requests, not retried, no token logged")
    func second401() async throws {
        let tokens = TokenSource(["t1", "t2"])
        try await withScriptedStore(Self.configuration(tokens)) { h in
            h.transport.on("/items", reply: .status(401))
            let error = try #require(await expectFetchError { try await h.store.refresh(ItemsFixture.resource()) })
            #expect(error.code == .httpStatus)
            #expect(error.status == 401)
            #expect(!error.message.contains("t1") && !error.message.contains("t2"), "message: \(error.message)")
            #expect(h.header("Authorization") == ["Bearer t1", "Bearer t2"])
            #expect(tokens.refreshCalls == 1)
            #expect(h.clock.sleeperCount == 0)
            let records = try h.store.allRecords()
            #expect(records.map(\.kind) == [.fetchFailed])
            #expect(records.first?.fetchFailed?.status == 401)
            let bytes = try #require(records.first).encoded()
            #expect(!bytes.containsBytes(Array("Bearer".utf8)))
            let dump = h.dumpJSON()
            #expect(dump.stdout.count == 1)
            #expect(dump.stdout.allSatisfy { !$0.contains("Bearer") && !$0.contains("t1") && !$0.contains("t2") }, "\(dump.stdout)")
        }
    }

    @Test("no authentication: no Authorization header, and a 401 is not renewed or retried")
    func noAuthentication() async throws {
        try await withScriptedStore(Self.configuration(nil)) { h in
            h.transport.on("/items", reply: .status(401))
            _ = await expectFetchError { try await h.store.refresh(ItemsFixture.resource()) }
            #expect(h.header("Authorization") == [nil])
            #expect(h.transport.requests.count == 1)
        }
    }

    @Test("requestTimeout is passed on as HTTPRequest.timeout", arguments: [Duration.seconds(7), .milliseconds(2500)])
    func requestTimeout(_ timeout: Duration) async throws {
        try await withScriptedStore(Self.configuration(nil, timeout: timeout)) { h in
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]))
            try await h.store.refresh(ItemsFixture.resource())
            #expect(h.transport.requests.map(\.request.timeout) == [timeout])
        }
    }

    @Test("without requestTimeout the request leaves the timeout to the transport")
    func noRequestTimeout() async throws {
        try await withScriptedStore(Self.configuration(nil)) { h in
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]))
            try await h.store.refresh(ItemsFixture.resource())
            #expect(h.transport.requests.map(\.request.timeout) == [nil])
        }
    }

    @Test("default headers are sent on every request, with a GET to the resource's URL and its query sorted")
    func defaultHeaders() async throws {
        var configuration = Self.configuration(nil)
        configuration.defaultHeaders = ["Accept": "application/json", "X-Client": "freshet-tests/1"]
        try await withScriptedStore(configuration) { h in
            h.transport.on("/items?a=1&b=2", reply: ItemsFixture.reply(["a"], headers: ["ETag": #""h1""#]))
            let resource = ItemsFixture.resource(.always, query: ["b": "2", "a": "1"])
            try await h.store.refresh(resource)
            try await h.store.refresh(resource)
            let requests = h.transport.requests.map(\.request)
            #expect(requests.map(\.method) == [.get, .get])
            #expect(requests.map(\.url.absoluteString) == ["https://api.test/items?a=1&b=2", "https://api.test/items?a=1&b=2"])
            #expect(requests.map { $0.headers["Accept"] } == ["application/json", "application/json"])
            #expect(requests.map { $0.headers["X-Client"] } == ["freshet-tests/1", "freshet-tests/1"])
            #expect(requests.map(\.body) == [nil, nil])
            #expect(requests[0].headers.count == 2)
            #expect(requests[1].headers.count == 3)
            #expect(requests[1].headers["If-None-Match"] == #""h1""#)
        }
    }

    @Test("the default configuration sends Accept: application/json")
    func defaultAccept() async throws {
        try await withScriptedStore(Self.configuration(nil)) { h in
            h.transport.on("/items", reply: ItemsFixture.reply(["a"]))
            try await h.store.refresh(ItemsFixture.resource())
            #expect(h.header("Accept") == ["application/json"])
        }
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in these bytes.
    func containsBytes(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return needle.isEmpty }
        for start in 0...(count - needle.count) where self[start..<start + needle.count].elementsEqual(needle) {
            return true
        }
        return false
    }
}
