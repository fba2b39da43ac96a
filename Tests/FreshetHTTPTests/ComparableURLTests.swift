import Foundation
import Testing
@testable import FreshetHTTP

/// The form paging compares next links in (RFC 3986 §6.2.2–6.2.3): each spelling of one URL
/// gives the same text, URLs that differ in what a server reads do not.
@Suite("ComparableURL (RFC 3986 §6.2 normalization)")
struct ComparableURLTests {
    static let canonical = "https://api.test/p?a=1&b=%C3%A9"

    @Test("each spelling of one URL has the canonical form", arguments: [
        "https://api.test/p?a=1&b=%C3%A9",
        "https://api.test/p?b=%C3%A9&a=1",             // parameter order
        "https://api.test:443/p?a=1&b=%C3%A9",         // default port
        "https://api.test:0443/p?a=1&b=%C3%A9",        // default port, leading zero
        "https://api.test/p?a=1&b=%c3%a9",             // percent-encoding case
        "https://api.test/p?a=%31&b=%C3%A9",           // an unreserved character encoded
        "HTTPS://API.Test/p?a=1&b=%C3%A9",             // scheme and host case
        "https://api.test/p?a=1&b=%C3%A9&",            // trailing &
        "https://api.test/p?a=1&&b=%C3%A9",            // empty parameter
        "https://api.test/p?a=1&b=%C3%A9#page-2",      // fragment
        "https://user:secret@api.test/p?a=1&b=%C3%A9", // userinfo
    ])
    func spelling(_ text: String) {
        #expect(ComparableURL(text).description == Self.canonical)
        #expect(ComparableURL(text) == ComparableURL(URL(string: Self.canonical)!))
    }

    @Test("an empty query and an empty path are left out or made /", arguments: [
        ("https://api.test/r?", "https://api.test/r"),
        ("https://api.test/r?#x", "https://api.test/r"),
        ("https://api.test", "https://api.test/"),
        ("https://api.test?", "https://api.test/"),
        ("http://api.test:80/r", "http://api.test/r"),
        ("http://api.test:/r", "http://api.test/r"),
        ("http://[::1]:80/r", "http://[::1]/r"),
        ("http://[::1]:8080/r?", "http://[::1]:8080/r"),
    ])
    func emptyParts(text: String, expected: String) {
        #expect(ComparableURL(text).description == expected)
    }

    @Test("URLs a server reads differently stay different", arguments: [
        ("https://api.test/p?a=1", "https://api.test/p?a=2"),
        ("https://api.test/p?a=1&a=2", "https://api.test/p?a=2&a=1"),   // repeated names keep their order
        ("https://api.test/p?a=%2F", "https://api.test/p?a=/"),         // a reserved character, encoded or not
        ("https://api.test/P", "https://api.test/p"),                   // the path's case
        ("https://api.test:8443/p", "https://api.test/p"),              // another port
        ("http://api.test/p", "https://api.test/p"),                    // another scheme
        ("http://api.test:443/p", "http://api.test/p"),                 // 443 is not http's default
        ("https://api.test/p?a=1", "https://api.test/p?a=1="),
    ])
    func different(a: String, b: String) {
        #expect(ComparableURL(a) != ComparableURL(b))
    }

    @Test("a string that is not a URL is normalized as far as it has URL parts")
    func notAURL() {
        #expect(ComparableURL("").description == "")
        #expect(ComparableURL("p?b=2&a=%7e").description == "p?a=~&b=2")
        #expect(ComparableURL("https://api.test/p?access_token=REDACTED&a=1").description == "https://api.test/p?a=1&access_token=REDACTED")
    }
}
