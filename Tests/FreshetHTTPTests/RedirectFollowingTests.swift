import Foundation
import Synchronization
import Testing
@testable import FreshetHTTP

/// A transport that answers from a table by URL and records what it was sent.
private final class TableTransport: HTTPTransport {
    let answers: [String: (status: Int, location: String?)]
    let sent = Mutex<[HTTPRequest]>([])

    init(_ answers: [String: (status: Int, location: String?)]) { self.answers = answers }

    func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        sent.withLock { $0.append(request) }
        let answer = answers[request.url.absoluteString] ?? (200, nil)
        var headers = HTTPHeaders()
        if let location = answer.location { headers.set(name: "Location", value: location) }
        return HTTPResponse(status: answer.status, headers: headers, body: Data("ok".utf8), url: request.url)
    }
}

@Suite("Following redirects")
struct RedirectFollowingTests {
    static let home = URL(string: "https://api.example.com/items")!
    static let credentials: HTTPHeaders = ["Authorization": "Bearer t", "X-Api-Key": "k", "Accept": "application/json", "If-None-Match": #""e""#]
    static let policy = RedirectPolicy(origin: Origin(home), boundHeaderNames: ["x-api-key", "Accept"])

    @Test("a GET to another origin is followed without the bound headers; the validators stay")
    func crossOriginGet() async throws {
        let transport = TableTransport(["https://api.example.com/items": (302, "https://cdn.example.net/items.json")])
        let answer = try await transport.send(HTTPRequest(url: Self.home, headers: Self.credentials), following: Self.policy)
        #expect(answer.response.status == 200)
        #expect(answer.redirects.map(\.absoluteString) == ["https://cdn.example.net/items.json"])
        #expect(answer.leftOrigin)
        let sent = transport.sent.withLock { $0 }
        #expect(sent.map(\.headers) == [Self.credentials, [#"If-None-Match"#: #""e""#]])
    }

    @Test("a 307 and a 308 within the origin keep the method, headers and body")
    func sameOrigin307() async throws {
        let transport = TableTransport(["https://api.example.com/a": (307, "/b"), "https://api.example.com/b": (308, "https://API.example.com:443/c")])
        let request = HTTPRequest(method: .post, url: URL(string: "https://api.example.com/a")!, headers: Self.credentials, body: Data("{}".utf8))
        let answer = try await transport.send(request, following: Self.policy)
        #expect(answer.response.status == 200)
        #expect(answer.refusal == nil)
        let sent = transport.sent.withLock { $0 }
        #expect(sent.map(\.url.absoluteString) == ["https://api.example.com/a", "https://api.example.com/b", "https://API.example.com:443/c"])
        #expect(sent.allSatisfy { $0.method == .post && $0.body == Data("{}".utf8) && $0.headers == Self.credentials })
    }

    @Test("a POST is not followed to another origin, nor turned into a GET by 301, 302 or 303", arguments: [
        (307, "https://evil.example/x", RedirectRefusal.Reason.crossOriginUnsafeMethod),
        (308, "http://api.example.com/x", .crossOriginUnsafeMethod),
        (301, "/x", .methodChange), (302, "/x", .methodChange), (303, "/x", .methodChange),
        (307, "mailto:a@b", .unusableLocation),
    ])
    func unsafeNotFollowed(status: Int, location: String, reason: RedirectRefusal.Reason) async throws {
        let transport = TableTransport(["https://api.example.com/items": (status, location)])
        let answer = try await transport.send(HTTPRequest(method: .post, url: Self.home, headers: Self.credentials, body: Data("{}".utf8)), following: Self.policy)
        #expect(answer.response.status == status)
        #expect(answer.refusal?.reason == reason)
        #expect(transport.sent.withLock { $0.count } == 1)
    }

    @Test("a first request outside the origin is sent without the bound headers")
    func firstRequestElsewhere() async throws {
        let transport = TableTransport([:])
        _ = try await transport.send(HTTPRequest(url: URL(string: "http://api.example.com/items")!, headers: Self.credentials), following: Self.policy)
        #expect(transport.sent.withLock { $0.map(\.headers) } == [[#"If-None-Match"#: #""e""#]])
    }

    @Test("more than maxRedirects redirects throw badResponse")
    func tooMany() async throws {
        let transport = TableTransport(["https://api.example.com/items": (302, "/items")])
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(url: Self.home), following: RedirectPolicy(maxRedirects: 3))
        }
        #expect(error?.code == .badResponse)
        #expect(error?.message == "more than 3 redirects from api.example.com:443")
        #expect(transport.sent.withLock { $0.count } == 4)
    }
}

@Suite("Origins and URL redaction")
struct OriginRedactionTests {
    @Test("origins compare scheme and host in lowercase with default ports", arguments: [
        ("http://h/a", "HTTP://H:80/b", true), ("https://h/", "https://h:443/x?y", true), ("http://h/", "https://h/", false),
        ("http://h:8080/", "http://h:8081/", false), ("http://u:p@h/", "http://h/", true), ("http://h/", "http://h.example/", false),
    ])
    func origins(a: String, b: String, same: Bool) throws {
        let first = try #require(URL(string: a))
        let second = try #require(URL(string: b))
        let lhs = try #require(Origin(first))
        #expect(lhs.contains(second) == same)
    }

    @Test("only http and https URLs with a host have an origin")
    func noOrigin() throws {
        let file = try #require(URL(string: "file:///etc/passwd"))
        let relative = try #require(URL(string: "/relative"))
        let ipv6 = try #require(URL(string: "http://[::1]:8080/"))
        #expect(Origin(file) == nil)
        #expect(Origin(relative) == nil)
        #expect(Origin(ipv6)?.description == "http://[::1]:8080")
    }

    @Test("removes userinfo and replaces secret query values, leaving the rest byte for byte", arguments: [
        ("https://u:p@api.example.com/items?access_token=abc&page=2", "https://api.example.com/items?access_token=REDACTED&page=2"),
        ("http://h/x?Token=a&API_KEY=b&apikey=c&key=d&signature=e&Sig=f&keep=g", "http://h/x?Token=REDACTED&API_KEY=REDACTED&apikey=REDACTED&key=REDACTED&signature=REDACTED&Sig=REDACTED&keep=g"),
        ("http://h/x?access%5Ftoken=a%20b&q=a%2Fb#frag", "http://h/x?access%5Ftoken=REDACTED&q=a%2Fb#frag"),
        ("http://h/x?token&tokens=1&=2", "http://h/x?token=REDACTED&tokens=1&=2"),
        ("http://user@h:81/p", "http://h:81/p"),
        ("http://h/p?next=a@b", "http://h/p?next=a@b"),
        ("http://h/list?page=1;token=X;q=2", "http://h/list?page=1;token=REDACTED;q=2"),
        ("http://h/list#access_token=X&state=s", "http://h/list#access_token=REDACTED&state=s"),
        ("http://h/sink?x=1#token=X", "http://h/sink?x=1#token=REDACTED"),
        ("http://h/a#section-2", "http://h/a#section-2"),
    ])
    func redaction(url: String, expected: String) {
        #expect(URLRedaction().redact(url) == expected)
        // A redacted fragment leaves a URL that can still be requested: fragments are not sent.
        #expect(URLRedaction().isRedacted(expected) == (expected.split(separator: "#").first ?? "").contains("REDACTED"))
        #expect(URLRedaction().hasSecret(expected) == false)
    }

    @Test("a configured list replaces the default names")
    func customNames() {
        let redaction = URLRedaction(secretParameterNames: ["Session"])
        #expect(redaction.redact("http://h/?session=1&token=2") == "http://h/?session=REDACTED&token=2")
    }
}
