import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FreshetHTTP
import Testing
import TestSupport
@testable import Freshet

/// Issue 7 item 1: credentials and default headers stay with the configured origin, against
/// two real loopback servers (two ports: two origins).
@Suite("Credentials stay with their origin", .scaledTimeLimit(minutes: 2))
struct CredentialOriginTests {
    @Test("a GET answered 302 to another origin is followed without Authorization or default headers")
    func crossOriginRedirectedGet() async throws {
        try await withTwoOrigins { home, other, store throws in
            let resource = Resource.document("todo", path: redirectPath(status: 302, to: absolute(other, "/todos/1")))
            let summary = try await store.refresh(resource)
            #expect(summary.rows == 1)
            #expect(try store.snapshot("todo").rows.map(\.id) == ["1"])

            let sent = try await home.requests()
            #expect(sent.map(\.status) == [302])
            #expect(sent.first?.header("Authorization") == "Bearer \(originToken)")
            #expect(sent.first?.header("X-Api-Key") == originAPIKey)
            #expect(sent.first?.header("Accept") == "application/json")

            let received = try await other.requests()
            #expect(received.map(\.path) == ["/todos/1"])
            let names = try #require(received.first).headerNames
            #if canImport(FoundationNetworking)
            // Exactly what libcurl adds by itself: nothing of the store's.
            #expect(names == ["accept", "accept-encoding", "accept-language", "connection", "host", "user-agent"])
            #else
            #expect(Set(names).isSubset(of: platformHeaderNames), "unexpected headers at the other origin: \(names)")
            #endif
            // The platform's own Accept, not the configured one.
            #expect(received.first?.header("Accept") == "*/*")
        }
    }

    @Test("an error answered by another origin after a redirect names that origin's URL as well as the request's")
    func errorAfterRedirectNamesTheAnsweringURL() async throws {
        try await withTwoOrigins(configure: { $0.retry = .init(maxAttempts: 1) }) { home, other, store throws in
            let path = redirectPath(status: 302, to: absolute(other, "/todos/99999"))
            let error = await #expect(throws: FetchError.self) { try await store.refresh(Resource.document("todo", path: path)) }
            #expect(error?.code == .httpStatus)
            #expect(error?.message == "GET \(absolute(home, path)) (redirected to \(absolute(other, "/todos/99999"))) answered 404 \(HTTPURLResponse.localizedString(forStatusCode: 404))")
        }
    }

    @Test("a GET answered 301 within the origin keeps its credentials")
    func sameOriginRedirectedGet() async throws {
        try await withTwoOrigins { home, _, store throws in
            try await store.refresh(Resource.document("todo", path: redirectPath(status: 301, to: "/todos/2")))
            let sent = try await home.requests()
            #expect(sent.map(\.path) == [redirectPath(status: 301, to: "/todos/2"), "/todos/2"])
            #expect(sent.map { $0.header("Authorization") } == ["Bearer \(originToken)", "Bearer \(originToken)"])
            #expect(sent.map { $0.header("X-Api-Key") } == [originAPIKey, originAPIKey])
        }
    }

    @Test("more redirects than maxRedirects fail with transport, recorded and not retried")
    func tooManyRedirects() async throws {
        try await withTwoOrigins(configure: { $0.maxRedirects = 2; $0.retry = .init(maxAttempts: 3) }) { home, _, store throws in
            let loop = redirectPath(status: 302, to: "/test/redirect?status=302&to=/test/redirect%3Fstatus%3D302%26to%3D/todos/1")
            let error = await #expect(throws: FetchError.self) { try await store.refresh(Resource.document("todo", path: loop)) }
            #expect(error?.code == .transport)
            #expect(try store.fetchFailures("todo").map(\.reason) == ["transport"])
            #expect(try await home.requests().count == 3)
        }
    }

    @Test("a mutation POST answered 307 within the origin is sent again with its body, token and Idempotency-Key, and confirmed")
    func sameOrigin307Post() async throws {
        try await withTwoOrigins { home, _, store throws in
            store.register(Resource.list("todos", path: "/todos", rowsAt: "", id: .field("id"), paging: .none))
            var create = try createTodo("tmp-1", "Buy milk")
            create.request.path = redirectPath(status: 307, to: "/todos")
            let outcome = try await store.mutate(create).outcome()
            #expect(outcome.status == 201)

            let sent = try await home.requests()
            #expect(sent.map(\.method) == ["POST", "POST"])
            #expect(sent.map(\.path) == [redirectPath(status: 307, to: "/todos"), "/todos"])
            #expect(sent[0].body == sent[1].body)
            #expect(sent[1].body?.contains("Buy milk") == true)
            #expect(sent[1].header("Idempotency-Key") == outcome.id.description)
            #expect(sent[1].header("Authorization") == "Bearer \(originToken)")
        }
    }

    @Test("a mutation POST answered 307 to another origin is never sent there and is rolled back, not confirmed")
    func crossOrigin307Post() async throws {
        try await withTwoOrigins { home, other, store throws in
            store.register(Resource.list("todos", path: "/todos", rowsAt: "", id: .field("id"), paging: .none))
            var create = try createTodo("tmp-1", "Buy milk")
            create.request.path = redirectPath(status: 307, to: absolute(other, "/todos"))
            let result = await settle(try await store.mutate(create))
            let error = try #require(result.error)
            #expect(error.code == .rejected)
            #expect(error.status == 307)
            #expect(error.message.hasSuffix("answered 307 (a POST redirected (307) to another origin, \(Origin(other.baseURL)!), is not followed)"))
            #expect(try await other.requests().isEmpty)
            #expect(try await home.requests().count == 1)
            #expect(try store.snapshot("todos").rows.isEmpty)
            #expect(try store.pendingMutations().isEmpty)
            let rolledBack = try store.mutationEvents().compactMap { entry -> Event.MutationRolledBack? in
                if case .mutationRolledBack(let r) = entry.event { return r }
                return nil
            }
            #expect(rolledBack.map(\.status) == [307])
            #expect(rolledBack.first?.reason.hasPrefix("server answered 307: a POST redirected (307) to another origin") == true)
        }
    }

    @Test("a mutation POST answered 302 within the origin is not re-sent as a GET")
    func sameOrigin302Post() async throws {
        try await withTwoOrigins { home, _, store throws in
            store.register(Resource.list("todos", path: "/todos", rowsAt: "", id: .field("id"), paging: .none))
            var create = try createTodo("tmp-1", "Buy milk")
            create.request.path = redirectPath(status: 302, to: "/todos")
            let error = try #require(await settle(try await store.mutate(create)).error)
            #expect(error.code == .rejected)
            #expect(error.status == 302)
            #expect(try await home.requests().map(\.method) == ["POST"])
        }
    }

    @Test("a next page on another origin stops paging with crossOrigin, keeps the first page and sends nothing there", arguments: ["body", "link"])
    func crossOriginNextPage(style: String) async throws {
        try await withTwoOrigins { home, other, store throws in
            let next = absolute(other, "/test/page?id=b")
            let resource = Resource.list("mixed", path: "/test/page", query: ["id": "a", "next": next, "style": style], rowsAt: "results", id: .field("id"),
                                         paging: style == "body" ? .nextField("next") : .linkHeader)
            let error = await #expect(throws: FetchError.self) { try await store.refresh(resource) }
            #expect(error?.code == .crossOrigin)
            #expect(error?.message == "paging of mixed stopped after page 1: the next page is on another origin (\(Origin(other.baseURL)!), not \(Origin(home.baseURL)!)); paging stops there")
            #expect(try store.snapshot("mixed").rows.map(\.id) == ["a"])
            #expect(try store.fetchFailures("mixed").map(\.reason) == ["crossOrigin"])
            #expect(try await other.requests().isEmpty)
            #expect(try await home.requests().count == 1)
        }
    }
}
