import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport
@testable import FreshetHTTP

@Suite("URLSessionTransport")
struct URLSessionTransportTests {
    @Test("builds a URLRequest with the method, body, timeout and exactly the request's headers")
    func urlRequest() throws {
        let request = HTTPRequest(
            method: .post,
            url: try #require(URL(string: "http://127.0.0.1:8080/api/items")),
            headers: ["Content-Type": "application/json", "X-Multi": "one", "x-multi": "two"],
            body: Data(#"{"a":1}"#.utf8),
            timeout: .milliseconds(1500)
        )
        let urlRequest = URLSessionTransport.urlRequest(for: request, timeout: .milliseconds(1500))
        #expect(urlRequest.httpMethod == "POST")
        #expect(urlRequest.url == request.url)
        #expect(urlRequest.httpBody == Data(#"{"a":1}"#.utf8))
        #expect(urlRequest.timeoutInterval == 1.5)
        #expect(urlRequest.cachePolicy == .reloadIgnoringLocalCacheData)
        #expect(urlRequest.allHTTPHeaderFields == ["Content-Type": "application/json", "X-Multi": "one,two"])
    }

    @Test("reads response headers sorted by lowercased name")
    func responseHeaders() throws {
        let url = try #require(URL(string: "http://127.0.0.1:8080/"))
        let response = try #require(HTTPURLResponse(
            url: url, statusCode: 200, httpVersion: "HTTP/1.1",
            headerFields: ["ETag": #""x""#, "cache-control": "max-age=60", "Age": "3"]
        ))
        // FoundationNetworking re-capitalizes names ("cache-control" -> "Cache-Control",
        // "ETag" -> "Etag"), Apple platforms do not: compare names in lowercase.
        let fields = URLSessionTransport.headers(of: response).fields
        #expect(fields.map { "\($0.name.lowercased()): \($0.value)" } == ["age: 3", "cache-control: max-age=60", #"etag: "x""#])
    }

    @Test("rounds timeouts up to the whole seconds FoundationNetworking can apply", arguments: [
        (Duration.milliseconds(300), Duration.seconds(1)),
        (.milliseconds(1700), .seconds(2)),
        (.seconds(30), .seconds(30)),
        (.nanoseconds(1), .seconds(1)),
    ])
    func effectiveTimeout(requested: Duration, linux: Duration) {
        #if canImport(FoundationNetworking)
        #expect(URLSessionTransport.effectiveTimeout(requested) == linux)
        #else
        #expect(URLSessionTransport.effectiveTimeout(requested) == requested)
        #endif
    }

    @Test("resolves a redirect's Location against the response URL (RFC 3986 §5)", arguments: [
        ("/pokemon/", "http://127.0.0.1:8080/pokemon/"),
        ("d/", "http://127.0.0.1:8080/api/d/"),
        ("../up?x=1", "http://127.0.0.1:8080/up?x=1"),
        (" https://other.example/a/ ", "https://other.example/a/"),
        ("//cdn.example/p", "http://cdn.example/p"),
        ("http://user:secret@other.example:8081/x", "http://other.example:8081/x"),
    ])
    func redirectTarget(location: String, expected: String) throws {
        let responseURL = try #require(URL(string: "http://127.0.0.1:8080/api/pokemon"))
        #expect(URLSessionTransport.redirectTarget(location: location, responseURL: responseURL)?.absoluteString == expected)
    }

    @Test("leaves a redirect alone when there is no usable Location")
    func redirectWithoutLocation() throws {
        let responseURL = try #require(URL(string: "http://127.0.0.1:8080/api/pokemon"))
        #expect(URLSessionTransport.redirectTarget(location: nil, responseURL: responseURL) == nil)
        #expect(URLSessionTransport.redirectTarget(location: "  ", responseURL: responseURL) == nil)
        #expect(URLSessionTransport.redirectTarget(location: "/x", responseURL: nil) == nil)
        #expect(URLSessionTransport.redirectTarget(location: "ftp://files.example/x", responseURL: responseURL) == nil)
    }

    @Test("uses 30 seconds and 6 connections per host by default")
    func defaults() {
        #expect(URLSessionTransport().configuration == URLSessionTransport.Configuration(timeout: .seconds(30), maximumConnectionsPerHost: 6,
                                                                                        deadline: .seconds(300), maximumResponseBytes: 67_108_864))
    }

    @Test("throws cancelled without touching the network when the task is already cancelled")
    func cancelledBeforeSending() async throws {
        let transport = URLSessionTransport()
        let request = HTTPRequest(url: try #require(URL(string: "http://127.0.0.1:9/never")))
        let task = Task { () -> String in
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(TransportError) {
                let response = try await transport.send(request)
                return "response \(response.status)"
            } catch {
                return error.description
            }
        }
        #expect(await task.value == "request cancelled (GET /never)")
    }
}

@Suite("URLSessionTransport against servers on loopback", .scaledTimeLimit(minutes: 1))
struct URLSessionTransportLiveTests {
    static let files = ["hello.txt": "hello, freshet\n"]

    @Test("a GET of a served file returns 200 with its exact bytes")
    func getFile() async throws {
        try await withFileServer(files: Self.files) { baseURL, _, _ in
            let transport = URLSessionTransport()
            let url = baseURL.appending(path: "hello.txt")
            let response = try await transport.send(HTTPRequest(url: url, headers: ["Accept": "text/plain"]))
            #expect(response.status == 200)
            #expect(response.body == Data("hello, freshet\n".utf8))
            #expect(response.url == url)
            #expect(response.headers["content-type"] == "text/plain")
            #expect(response.headers["Content-Length"] == "15")
            #expect(response.headers["Last-Modified"].flatMap { HTTPDate.parse($0) } != nil)
            #expect(response.duration > .zero)
        }
    }

    @Test("a missing file is a 404 response, not an error")
    func missingFile() async throws {
        try await withFileServer(files: Self.files) { baseURL, _, _ in
            let response = try await URLSessionTransport().send(HTTPRequest(url: baseURL.appending(path: "missing.txt")))
            #expect(response.status == 404)
            #expect(response.headers["Content-Type"] == "text/html;charset=utf-8")
        }
    }

    @Test("a conditional GET with the Last-Modified date reaches the caller as a 304 with no body")
    func notModified() async throws {
        try await withFileServer(files: Self.files) { baseURL, _, _ in
            let transport = URLSessionTransport()
            let url = baseURL.appending(path: "hello.txt")
            let first = try await transport.send(HTTPRequest(url: url))
            let lastModified = try #require(first.headers["Last-Modified"])
            let second = try await transport.send(HTTPRequest(url: url, headers: ["If-Modified-Since": lastModified]))
            #expect(second.status == 304)
            #expect(second.body.isEmpty)
            // No cache of URLSession's own answers or revalidates: the next plain GET is a 200.
            let third = try await transport.send(HTTPRequest(url: url))
            #expect(third.status == 200)
            #expect(third.body == Data("hello, freshet\n".utf8))
        }
    }

    @Test("returns a redirect unfollowed; send(_:following:) follows it to the path with a trailing slash")
    func redirect() async throws {
        try await withFileServer(files: ["docs/index.html": "<p>docs</p>\n"]) { baseURL, _, _ in
            // http.server answers /docs with 301 Location: /docs/
            let transport = URLSessionTransport()
            let unfollowed = try await transport.send(HTTPRequest(url: baseURL.appending(path: "docs")))
            #expect(unfollowed.status == 301)
            #expect(unfollowed.headers["Location"] == "/docs/")
            let followed = try await transport.send(HTTPRequest(url: baseURL.appending(path: "docs")), following: RedirectPolicy())
            #expect(followed.redirects.map(\.absoluteString) == [baseURL.absoluteString + "docs/"])
            #expect(followed.refusal == nil)
            let response = followed.response
            #expect(response.status == 200)
            #expect(response.url.absoluteString == baseURL.absoluteString + "docs/")
            #expect(response.body == Data("<p>docs</p>\n".utf8))
        }
    }

    @Test("a body over maximumResponseBytes throws responseTooLarge; one at the limit is returned whole")
    func sizeLimit() async throws {
        try await withFileServer(files: ["big.txt": String(repeating: "x", count: 200_000)]) { baseURL, _, port in
            let transport = URLSessionTransport(configuration: .init(maximumResponseBytes: 200_000))
            let url = baseURL.appending(path: "big.txt")
            let whole = try await transport.send(HTTPRequest(url: url))
            #expect(whole.body.count == 200_000)
            let error = await #expect(throws: TransportError.self) {
                try await transport.send(HTTPRequest(url: url, maximumResponseBytes: 199_999))
            }
            #expect(error?.code == .responseTooLarge)
            #expect(error?.description == "response from 127.0.0.1:\(port) is larger than the limit of 199999 bytes (GET /big.txt)")
        }
    }

    @Test("a HEAD request returns the headers and no body")
    func head() async throws {
        try await withFileServer(files: Self.files) { baseURL, _, _ in
            let response = try await URLSessionTransport().send(HTTPRequest(method: .head, url: baseURL.appending(path: "hello.txt")))
            #expect(response.status == 200)
            #expect(response.headers["Content-Length"] == "15")
            #expect(response.body.isEmpty)
        }
    }

    @Test("a closed port throws cannotConnect with a one-line description")
    func closedPort() async throws {
        let port = try await withFileServer(files: [:]) { _, server, port in
            server.stop()
            return port
        }
        let request = HTTPRequest(url: try #require(URL(string: "http://127.0.0.1:\(port)/hello.txt")))
        let error = await #expect(throws: TransportError.self) {
            try await URLSessionTransport().send(request)
        }
        #expect(error?.code == .cannotConnect)
        #expect(error?.description == "cannot connect to 127.0.0.1:\(port): connection refused or host unreachable (GET /hello.txt)")
    }

    @Test("a server that never answers makes the request throw timedOut")
    func timesOut() async throws {
        let server = try silentServer()
        defer { server.stop() }
        let port = try port(in: try await server.line(containing: "port"))
        // The request's 1 s idle timeout applies, not the transport's 60 s: were it 60 s, the
        // 50 s deadline would end the exchange first (deadlineExceeded). Judged by which limit
        // ends it, not by the wall clock: a busy test pool can resume this task many seconds
        // after URLSession reported the timeout (CI once measured 31 s).
        let request = HTTPRequest(url: try #require(URL(string: "http://127.0.0.1:\(port)/slow")),
                                  timeout: .seconds(1), deadline: .seconds(50))
        let transport = URLSessionTransport(configuration: .init(timeout: .seconds(60)))
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(request)
        }
        #expect(error?.code == .timedOut)
        #expect(error?.description == "timed out after 1 s waiting for 127.0.0.1:\(port) (GET /slow)")
    }

    @Test("a server that never finishes makes the request throw deadlineExceeded before the idle timeout")
    func deadline() async throws {
        let server = try silentServer()
        defer { server.stop() }
        let port = try port(in: try await server.line(containing: "port"))
        let request = HTTPRequest(url: try #require(URL(string: "http://127.0.0.1:\(port)/slow")), timeout: .seconds(60), deadline: .milliseconds(300))
        let error = await #expect(throws: TransportError.self) {
            try await URLSessionTransport().send(request)
        }
        #expect(error?.code == .deadlineExceeded)
        #expect(error?.description == "no complete response from 127.0.0.1:\(port) within the 300 ms deadline (GET /slow)")
    }

    @Test("cancelling the task while the request is in flight throws cancelled")
    func cancelledInFlight() async throws {
        let server = try silentServer()
        defer { server.stop() }
        let port = try port(in: try await server.line(containing: "port"))
        let request = HTTPRequest(url: try #require(URL(string: "http://127.0.0.1:\(port)/hang")))
        let transport = URLSessionTransport()
        let task = Task { () -> String in
            do throws(TransportError) {
                let response = try await transport.send(request)
                return "response \(response.status)"
            } catch {
                return error.description
            }
        }
        _ = try await server.line(containing: "received")
        task.cancel()
        #expect(await task.value == "request cancelled (GET /hang)")
    }
}
