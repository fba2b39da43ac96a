import Foundation
import FreshetHTTP
import Testing
import TestSupport
@testable import Freshet

/// Issue 7 item 1: credentials in URLs (userinfo, secret query parameters) are never stored
/// or printed.
@Suite("Credentials in URLs never reach the log", .scaledTimeLimit(minutes: 2))
struct URLSecretTests {
    static let secrets = ["alice", "pa55word", "tok-QUERY-1", "srv-SIGNED", "tok-QUERY-3", originToken, originAPIKey]

    @Test("userinfo and secret query values are absent from the log file, dump and dump --json; the stored URLs say REDACTED")
    func secretsNeverStored() async throws {
        try await FixtureServer.withRunning { server in
            try await withTemporaryDirectory { directory throws in
                var components = try #require(URLComponents(url: server.baseURL, resolvingAgainstBaseURL: false))
                components.user = "alice"
                components.password = "pa55word"
                let credentialedURL: URL = try #require(components.url)
                var configuration = Configuration.test(baseURL: credentialedURL, freshness: .always)
                configuration.defaultHeaders = ["Accept": "application/json", "X-Api-Key": originAPIKey]
                configuration.authentication = .init(token: { originToken }, refresh: {})
                configuration.retry = .init(maxAttempts: 1)
                let store = try Store(directory: directory, configuration: configuration, dependencies: .test(transport: URLSessionTransport()))
                let pages = Resource.list("secret-pages", path: "/test/page",
                                          query: ["pages": "2", "access_token": "tok-QUERY-1"],
                                          rowsAt: "results", id: .field("id"))
                let summary = try await store.refresh(pages)
                #expect(summary.pages == 2)
                let missing = Resource(collection: "secret-missing", path: "/nope/1", query: ["api_key": "tok-QUERY-3"], rows: .document, id: .field("id"))
                let error = await #expect(throws: FetchError.self) { try await store.refresh(missing) }
                #expect(error?.url == "http://127.0.0.1:\(server.baseURL.port ?? 0)/nope/1?api_key=REDACTED")
                #expect(error.map { e in !Self.secrets.contains { e.message.contains($0) } } == true)

                let mark = try #require(try store.snapshot("secret-pages").syncMark)
                let base = "http://127.0.0.1:\(server.baseURL.port ?? 0)"
                #expect(mark.pages.map(\.url) == [base + "/test/page?access_token=REDACTED&pages=2",
                                                    base + "/test/page?access_token=REDACTED&page=1&pages=2&sig=REDACTED"])
                #expect(mark.pages.map(\.next) == [base + "/test/page?access_token=REDACTED&page=1&pages=2&sig=REDACTED", nil])
                #expect(try store.snapshot("secret-pages").rows.map(\.id) == ["p0", "p1"])
                store.close()

                let text = runTool(["dump", directory.path])
                let json = runTool(["dump", directory.path, "--json"])
                #expect(text.status == 0 && json.status == 0)
                let printed = (text.stdout + text.stderr + json.stdout + json.stderr).joined(separator: "\n")
                #expect(printed.contains("access_token=REDACTED"))
                #expect(printed.contains("sig=REDACTED"))
                #expect(printed.contains("api_key=REDACTED"))
                for secret in Self.secrets {
                    #expect(!printed.contains(secret), "dump printed \(secret)")
                }
                let raw = try Data(contentsOf: directory.appendingPathComponent("data.mdb"))
                for secret in Self.secrets {
                    #expect(raw.firstRange(of: Data(secret.utf8)) == nil, "data.mdb holds \(secret)")
                }
            }
        }
    }

    @Test("a mutation with a credential in its path or headers is refused before anything is stored", arguments: [
        Mutation.Request(method: .post, path: "/todos?access_token=tok-QUERY-1"),
        Mutation.Request(method: .post, path: "http://alice:pa55word@127.0.0.1:9/todos"),
        Mutation.Request(method: .post, path: "/todos", headers: ["authorization": "Bearer tok-QUERY-1"]),
        Mutation.Request(method: .post, path: "/todos", headers: ["X-Api-Key": "tok-QUERY-1"]),
        Mutation.Request(method: .post, path: "/todos?x=1#token=tok-QUERY-1"),
        Mutation.Request(method: .post, path: "/todos?page=1;token=tok-QUERY-1"),
    ])
    func mutationCredentialsRefused(request: Mutation.Request) async throws {
        try await withTemporaryStore { store throws in
            store.register(Resource.list("todos", path: "/todos", rowsAt: "", id: .field("id"), paging: .none))
            let mutation = Mutation(name: "createTodo", ops: [.upsert(serverTodo(1, "Buy milk"), in: "todos")], request: request)
            let error = await #expect(throws: MutationError.self) { try await store.mutate(mutation) }
            #expect(error?.code == .invalidMutation)
            #expect(error.map { e in !Self.secrets.contains { e.message.contains($0) } } == true)
            #expect(try store.allRecords().isEmpty)
        }
    }

    @Test("a stored page whose next URL was redacted is revalidated without validators, so its 200 brings the real next link")
    func redactedNextDropsValidators() throws {
        var mark = SyncMark()
        mark.validatedAt = Date(timeIntervalSince1970: 0)
        mark.pages = [
            .init(url: "http://h/p?access_token=REDACTED&page=0", etag: #""e0""#, next: "http://h/p?access_token=REDACTED&page=1"),
            .init(url: "http://h/p?page=1", etag: #""e1""#, next: "http://h/p?page=2"),
        ]
        let first = try #require(URL(string: "http://h/p?access_token=tok-QUERY-1&page=0"))
        let second = try #require(URL(string: "http://h/p?page=1"))
        #expect(Store.validators(for: first, page: 0, in: mark) == (nil, nil))
        #expect(Store.validators(for: second, page: 1, in: mark) == (#""e1""#, nil))
    }
}
