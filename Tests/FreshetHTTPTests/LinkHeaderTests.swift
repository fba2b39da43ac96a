import Foundation
import Testing
@testable import FreshetHTTP

@Suite("LinkHeader (RFC 8288)")
struct LinkHeaderTests {
    static let base = URL(string: "https://example.com/api/items?page=2")

    @Test("reads GitHub's pagination links")
    func github() throws {
        let value = #"<https://api.github.com/repositories/1300192/issues?page=2>; rel="prev", "#
            + #"<https://api.github.com/repositories/1300192/issues?page=4>; rel="next", "#
            + #"<https://api.github.com/repositories/1300192/issues?page=515>; rel="last", "#
            + #"<https://api.github.com/repositories/1300192/issues?page=1>; rel="first""#
        let links = LinkHeader(parsing: value, baseURL: URL(string: "https://api.github.com/repositories/1300192/issues?page=3"))
        #expect(links.links.map(\.rel) == [["prev"], ["next"], ["last"], ["first"]])
        #expect(links.url(rel: "next") == URL(string: "https://api.github.com/repositories/1300192/issues?page=4"))
        #expect(links.url(rel: "LAST") == URL(string: "https://api.github.com/repositories/1300192/issues?page=515"))
        #expect(links.url(rel: "prev") == URL(string: "https://api.github.com/repositories/1300192/issues?page=2"))
        #expect(links.url(rel: "alternate") == nil)
    }

    @Test("resolves relative targets against the base URL", arguments: [
        ("</items?page=3>; rel=next", "https://example.com/items?page=3"),
        ("<?page=3>; rel=next", "https://example.com/api/items?page=3"),
        ("<page3>; rel=next", "https://example.com/api/page3"),
        ("<//cdn.example.com/x>; rel=next", "https://cdn.example.com/x"),
        ("<>; rel=next", "https://example.com/api/items?page=2"),
        ("<http://other.example/y>; rel=next", "http://other.example/y"),
    ])
    func relative(value: String, expected: String) {
        let links = LinkHeader(parsing: value, baseURL: Self.base)
        #expect(links.url(rel: "next")?.absoluteString == expected)
    }

    @Test("leaves relative targets relative without a base URL")
    func noBase() {
        let links = LinkHeader(parsing: "</a?b=1>; rel=next", baseURL: nil)
        #expect(links.url(rel: "next")?.relativeString == "/a?b=1")
    }

    @Test("splits and lowercases relation types and ignores a second rel (RFC 8288 §3.3)")
    func relationTypes() {
        let links = LinkHeader(parsing: #"<https://x.example/a>; rel="next  LAST"; rel=prev"#, baseURL: nil)
        #expect(links.links.count == 1)
        #expect(links.links.first?.rel == ["next", "last"])
        #expect(links.url(rel: "Last") == URL(string: "https://x.example/a"))
        #expect(links.url(rel: "prev") == nil)
    }

    @Test("keeps other parameters; quoted values may hold commas and semicolons")
    func parameters() throws {
        let value = #"<https://x.example/a>; rel=next; type="text/html"; TITLE="a, b; c"; hreflang=en; crossorigin; title=second, <https://x.example/b>"#
        let links = LinkHeader(parsing: value, baseURL: nil)
        #expect(links.links == [
            LinkHeader.Link(
                url: try #require(URL(string: "https://x.example/a")),
                rel: ["next"],
                parameters: ["type": "text/html", "title": "a, b; c", "hreflang": "en", "crossorigin": ""]
            ),
            LinkHeader.Link(url: try #require(URL(string: "https://x.example/b")), rel: []),
        ])
    }

    @Test("is tolerant of whitespace and case around parameters")
    func whitespace() {
        let links = LinkHeader(parsing: "  <https://x.example/a>  ;  REL = \"next\"  ,  ", baseURL: nil)
        #expect(links.url(rel: "next") == URL(string: "https://x.example/a"))
        #expect(links.links.count == 1)
    }

    @Test("unescapes quoted-pairs in quoted values")
    func quotedPairs() {
        let links = LinkHeader(parsing: #"<https://x.example/a>; rel=next; title="say \"hi\"""#, baseURL: nil)
        #expect(links.links.first?.parameters["title"] == #"say "hi""#)
    }

    @Test("skips a link-value that does not start with <")
    func skipsGarbage() {
        let links = LinkHeader(parsing: #"garbage; rel="x, y", <https://x.example/b>; rel=next"#, baseURL: nil)
        #expect(links.links.count == 1)
        #expect(links.url(rel: "next") == URL(string: "https://x.example/b"))
    }

    @Test("gives no links for empty or broken input", arguments: ["", " , ", "<https://x.example/a; rel=next", "rel=next", ";;;"])
    func noLinks(value: String) {
        #expect(LinkHeader(parsing: value, baseURL: Self.base).links == [])
    }

    @Test("keeps the links before an unterminated target")
    func unterminatedTail() {
        let links = LinkHeader(parsing: "<https://x.example/a>; rel=next, <https://x.example/b; rel=last", baseURL: nil)
        #expect(links.links.map(\.url) == [URL(string: "https://x.example/a")])
    }

    @Test("reads all Link lines of a header list as one list")
    func fromHeaders() {
        let headers: HTTPHeaders = ["Link": "</p/2>; rel=next", "link": "</p/9>; rel=last"]
        let links = LinkHeader(headers: headers, baseURL: Self.base)
        #expect(links.url(rel: "next") == URL(string: "https://example.com/p/2"))
        #expect(links.url(rel: "last") == URL(string: "https://example.com/p/9"))
        #expect(LinkHeader(headers: [:], baseURL: Self.base).links == [])
    }
}
