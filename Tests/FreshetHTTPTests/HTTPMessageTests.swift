import Foundation
import Testing
@testable import FreshetHTTP

@Suite("HTTPMethod, HTTPRequest and HTTPResponse")
struct HTTPMessageTests {
    @Test("the standard methods have their upper-case names", arguments: [
        (HTTPMethod.get, "GET"), (.head, "HEAD"), (.post, "POST"),
        (.put, "PUT"), (.patch, "PATCH"), (.delete, "DELETE"),
    ])
    func methodNames(method: HTTPMethod, name: String) {
        #expect(method.rawValue == name)
        #expect(method.description == name)
        #expect(HTTPMethod(rawValue: name) == method)
    }

    @Test("methods are case-sensitive and can be written as literals")
    func methodLiterals() {
        let purge: HTTPMethod = "PURGE"
        #expect(purge.rawValue == "PURGE")
        #expect(HTTPMethod(rawValue: "get") != .get)
    }

    @Test("a request defaults to a GET with no headers, body or timeout")
    func requestDefaults() throws {
        let url = try #require(URL(string: "https://pokeapi.co/api/v2/pokemon"))
        let request = HTTPRequest(url: url)
        #expect(request.method == .get)
        #expect(request.headers.isEmpty)
        #expect(request.body == nil)
        #expect(request.timeout == nil)
        #expect(request == HTTPRequest(method: .get, url: url, headers: [:], body: nil, timeout: nil))
        #expect(request != HTTPRequest(url: url, timeout: .seconds(5)))
    }

    @Test("requests whose headers differ only in name case are equal")
    func requestEquality() throws {
        let url = try #require(URL(string: "https://pokeapi.co/api/v2/pokemon"))
        #expect(HTTPRequest(url: url, headers: ["Accept": "application/json"])
            == HTTPRequest(url: url, headers: ["accept": "application/json"]))
    }
}
