import Testing
@testable import FreshetHTTP

@Suite("HTTPHeaders")
struct HTTPHeadersTests {
    @Test("looks names up without regard to ASCII case", arguments: ["Content-Type", "content-type", "CONTENT-TYPE", "cOnTeNt-TyPe"])
    func caseInsensitiveLookup(name: String) {
        let headers: HTTPHeaders = ["Content-Type": "application/json"]
        #expect(headers[name] == "application/json")
        #expect(headers.values(for: name) == ["application/json"])
        #expect(headers.contains(name))
    }

    @Test("does not confuse names that differ in more than case")
    func differentNames() {
        let headers: HTTPHeaders = ["ETag": #""a""#]
        #expect(headers["E-Tag"] == nil)
        #expect(headers["ETa"] == nil)
        #expect(headers.values(for: "Tag") == [])
        #expect(!headers.contains("ETags"))
    }

    @Test("keeps every line of a repeated name, in order, and the subscript gives the first")
    func repeatedNames() {
        var headers: HTTPHeaders = ["Link": "<a>; rel=next", "Accept": "*/*"]
        headers.add(name: "link", value: "<b>; rel=last")
        #expect(headers.count == 3)
        #expect(headers["LINK"] == "<a>; rel=next")
        #expect(headers.values(for: "Link") == ["<a>; rel=next", "<b>; rel=last"])
        #expect(headers.combinedValue(for: "link") == "<a>; rel=next, <b>; rel=last")
        #expect(headers.combinedValue(for: "Missing") == nil)
        #expect(headers.fields.map(\.name) == ["Link", "Accept", "link"])
    }

    @Test("a dictionary literal keeps its order and its repeated names")
    func dictionaryLiteral() {
        let headers: HTTPHeaders = ["B": "1", "A": "2", "b": "3"]
        #expect(headers.fields == [
            HTTPHeaders.Field(name: "B", value: "1"),
            HTTPHeaders.Field(name: "A", value: "2"),
            HTTPHeaders.Field(name: "b", value: "3"),
        ])
        #expect(Array(headers) == headers.fields)
    }

    @Test("set replaces the first line in place, removes later ones, and appends when absent")
    func set() {
        var headers: HTTPHeaders = ["Accept": "a", "X-One": "1", "accept": "b", "X-Two": "2"]
        headers.set(name: "ACCEPT", value: "c")
        #expect(headers.fields == [
            HTTPHeaders.Field(name: "ACCEPT", value: "c"),
            HTTPHeaders.Field(name: "X-One", value: "1"),
            HTTPHeaders.Field(name: "X-Two", value: "2"),
        ])
        headers.set(name: "If-None-Match", value: #""v1""#)
        #expect(headers.fields.last == HTTPHeaders.Field(name: "If-None-Match", value: #""v1""#))
        #expect(headers.count == 4)
    }

    @Test("remove drops every line of the name and ignores missing names")
    func remove() {
        var headers: HTTPHeaders = ["Accept": "a", "X-One": "1", "ACCEPT": "b"]
        headers.remove(name: "accept")
        #expect(headers.fields == [HTTPHeaders.Field(name: "X-One", value: "1")])
        headers.remove(name: "Missing")
        #expect(headers.count == 1)
    }

    @Test("the subscript setter sets, and setting nil removes")
    func subscriptSetter() {
        var headers: HTTPHeaders = ["Accept": "a", "accept": "b"]
        headers["ACCEPT"] = "c"
        #expect(headers.fields == [HTTPHeaders.Field(name: "ACCEPT", value: "c")])
        headers["Accept"] = nil
        #expect(headers.isEmpty)
    }

    @Test("are equal when each name has the same values in the same order (RFC 9110 §5.3)")
    func equality() {
        let a: HTTPHeaders = ["Accept": "x", "Link": "1", "Link": "2"]
        let b: HTTPHeaders = ["link": "1", "ACCEPT": "x", "LINK": "2"]
        let reordered: HTTPHeaders = ["Accept": "x", "Link": "2", "Link": "1"]
        let differentValueCase: HTTPHeaders = ["Accept": "X", "Link": "1", "Link": "2"]
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a != reordered)
        #expect(a != differentValueCase)
        #expect(a != ["Accept": "x", "Link": "1"])
        #expect(HTTPHeaders() == [:])
    }

    @Test("describes itself as one field line per line")
    func description() {
        let headers: HTTPHeaders = ["Accept": "*/*", "If-None-Match": #"W/"v1""#]
        #expect(headers.description == "Accept: */*\nIf-None-Match: W/\"v1\"")
    }
}
