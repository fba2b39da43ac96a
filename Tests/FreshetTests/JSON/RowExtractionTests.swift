import Foundation
import Testing
@testable import Freshet

@Suite("Extracting rows from response bodies")
struct RowExtractionTests {
    let list = Resource.list("items", path: "/items")
    let array = Resource(collection: "items", path: "/items", rows: .rootArray, id: .field("id"))
    let document = Resource.document("item", path: "/item")

    func extract(_ body: String, _ resource: Resource) throws(RowExtraction.Failure) -> RowExtraction.Result {
        try RowExtraction.extract(Data(body.utf8), for: resource)
    }

    func rowTexts(_ body: String, _ resource: Resource) throws -> [String] {
        try extract(body, resource).rows.map { String(decoding: $0.json, as: UTF8.self) }
    }

    @Test("a canonical row is a slice of the body, at the body's own indices; rebased, the same bytes from index 0")
    func canonicalRowsAreSlicesOfTheBody() throws {
        let text = #"{"results":[{"name":"a","url":"u/1"},{"url":"u/2","name":"b"}]}"#
        // The body itself a slice (as a transport's buffer may give it).
        let body = Data(("xyz" + text).utf8)[3...]
        let rows = try RowExtraction.extract(body, for: Resource.list("p", path: "/p", id: .field("name"), paging: .none)).rows
        #expect(rows.map(\.id) == ["a", "b"])
        #expect(rows[0].json == Data(#"{"name":"a","url":"u/1"}"#.utf8))
        #expect(rows[0].json.startIndex == 3 + 12)
        // Not canonical (keys unsorted): written anew, from index 0.
        #expect(rows[1].json == Data(#"{"name":"b","url":"u/2"}"#.utf8))
        #expect(rows[1].json.startIndex == 0)
        let rebased = rows[0].rebased
        #expect(rebased == rows[0])
        #expect(rebased.json.startIndex == 0)
    }

    @Test("a page of canonical rows carries each row's range of the body; a row written anew leaves the page without")
    func canonicalRowsCarryTheirRanges() throws {
        let canonical = #"{"results":[{"name":"a","url":"u/1"},{"name":"b","url":"u/2"}]}"#
        let body = Data(("xyz" + canonical).utf8)[3...]
        let resource = Resource.list("p", path: "/p", id: .field("name"), paging: .none)
        let result = try RowExtraction.extract(body, for: resource)
        let slices = try #require(result.slices)
        // Offsets from the body's first byte, whatever its own indices.
        #expect(slices.ranges == [12..<36, 37..<61])
        let texts = slices.withBytes { bytes, ranges in ranges.map { String(decoding: UnsafeRawBufferPointer(rebasing: bytes[$0]), as: UTF8.self) } }
        #expect(texts == [#"{"name":"a","url":"u/1"}"#, #"{"name":"b","url":"u/2"}"#])
        #expect(texts == result.rows.map { String(decoding: $0.json, as: UTF8.self) })
        let rewritten = #"{"results":[{"name":"a","url":"u/1"},{"url":"u/2","name":"b"}]}"#
        #expect(try RowExtraction.extract(Data(rewritten.utf8), for: resource).slices == nil)
    }

    @Test("setting a fetched event's rows drops its slices; the slices are not part of the event's value")
    func slicesFollowTheirRows() throws {
        let body = Data(#"{"results":[{"name":"a","url":"u/1"}]}"#.utf8)
        let result = try RowExtraction.extract(body, for: Resource.list("p", path: "/p", id: .field("name"), paging: .none))
        let response = ResponseInfo(url: "http://h/p", status: 200)
        var event = Event.Fetched(placement: .replace, rows: result.rows, slices: result.slices, response: response,
                                  nextCursor: nil, basisLSN: nil, readPolicy: nil)
        #expect(event.slices?.count == 1)
        let plain = Event.Fetched(placement: .replace, rows: result.rows, response: response)
        #expect(event == plain)
        #expect(event.hashValue == plain.hashValue)
        event.rows = [Row(id: "z", json: Data("{}".utf8))]
        #expect(event.slices == nil)
        #expect(event.rows.map(\.id) == ["z"])
    }

    @Test("rows are minified with keys sorted, strings minimally escaped, numbers as the server wrote them")
    func canonicalForm() throws {
        let body = """
        { "next" : null, "results" : [
            { "url" : "/api/v2/pokemon/25/", "name" : "pika\\u0063hu", "h": 1.50, "big": 123456789012345678901234567890,
              "tiny": 1e-400, "nested": {"z": [ [1, 2], [], {"y": "\\/", "x": true} ], "a": null} }
        ] }
        """
        let result = try extract(body, list)
        #expect(result.next == nil)
        #expect(result.rows.map(\.id) == ["25"])
        #expect(try rowTexts(body, list) == [#"{"big":123456789012345678901234567890,"h":1.50,"name":"pikachu","nested":{"a":null,"z":[[1,2],[],{"x":true,"y":"/"}]},"tiny":1e-400,"url":"/api/v2/pokemon/25/"}"#])
    }

    @Test("the same row with other white space and key order gives the same bytes, so a refetch writes nothing")
    func identity() throws {
        let a = try rowTexts(#"[{"id":1,"title":"x","tags":["a","b"],"meta":{"k":1,"j":2}}]"#, array)
        let b = try rowTexts("[ {\"meta\" : {\"j\":2, \"k\":1},\n \"tags\":[ \"a\" , \"b\" ], \"title\":\"x\", \"id\":1 } ]", array)
        #expect(a == b)
        #expect(a == [#"{"id":1,"meta":{"j":2,"k":1},"tags":["a","b"],"title":"x"}"#])
    }

    @Test("a key that appears twice is kept once, with its last value (as JSONSerialization reads it)")
    func duplicateKeys() throws {
        let result = try extract(#"[{"id":"1","b":1,"a":2,"b":3}]"#, array)
        #expect(result.rows.map(\.id) == ["1"])
        #expect(try rowTexts(#"[{"id":"1","b":1,"a":2,"b":3}]"#, array) == [#"{"a":2,"b":3,"id":"1"}"#])
        #expect(try extract(#"[{"id":"1","id":"2"}]"#, array).rows.map(\.id) == ["2"])
    }

    @Test("keys with escapes sort by their text; escapes are rewritten in the one minimal form")
    func escapedKeys() throws {
        #expect(try rowTexts(#"[{"id":1,"\u0062":1,"a":2}]"#, array) == [#"{"a":2,"b":1,"id":1}"#])
        let escaped = try rowTexts(#"[{"id":1,"s":"\u00e9\/\ud834\udd1e\u0001\n\"\\\u2028"}]"#, array)
        let plain = try rowTexts("[{\"id\":1,\"s\":\"é/𝄞\\u0001\\n\\\"\\\\\u{2028}\"}]", array)
        #expect(escaped == plain)
        #expect(escaped == ["{\"id\":1,\"s\":\"é/𝄞\\u0001\\n\\\"\\\\\u{2028}\"}"])
    }

    @Test("IDs come from strings, integers, whole numbers and URL path components")
    func identities() throws {
        #expect(try extract(#"[{"id":"a b"},{"id":7},{"id":-3},{"id":2.0},{"id":"\u00e9"}]"#, array).rows.map(\.id) == ["a b", "7", "-3", "2", "é"])
        #expect(try extract(#"{"results":[{"url":"https://x/api/v2/pokemon/25/"}],"next":"https://x/?offset=20"}"#, list).next == "https://x/?offset=20")
    }

    static let failures: [(body: String, resource: Resource, reason: String)] = [
        ("this is not json", Resource(collection: "items", path: "/items", rows: .rootArray, id: .field("id")),
         #"body is not JSON (16 bytes, starting "this is not json"): unexpected "h" at byte 1"#),
        ("[1]", Resource(collection: "items", path: "/items", rows: .rootArray, id: .field("id")), "row 0 is not a JSON object"),
        ("{}", Resource(collection: "items", path: "/items", rows: .rootArray, id: .field("id")), "body is not a JSON array"),
        ("[]", Resource.list("items", path: "/items"), "body is not a JSON object, so it has no \"next\""),
        (#"{"next":1}"#, Resource.list("items", path: "/items"), "\"next\" is neither a string nor null"),
        (#"{"results":{}}"#, Resource.list("items", path: "/items", paging: .none), "body has no array under \"results\""),
        ("[]", Resource.list("items", path: "/items", paging: .none), "body is not a JSON object with \"results\""),
        (#"[{"id":""}]"#, Resource(collection: "items", path: "/items", rows: .rootArray, id: .field("id")), "row 0 has no string or integer \"id\" to use as its ID"),
        (#"[{"id":1.5}]"#, Resource(collection: "items", path: "/items", rows: .rootArray, id: .field("id")), "row 0 has no string or integer \"id\" to use as its ID"),
        (#"[{"id":true}]"#, Resource(collection: "items", path: "/items", rows: .rootArray, id: .field("id")), "row 0 has no string or integer \"id\" to use as its ID"),
        (#"{"results":[{"url":"///"}]}"#, Resource.list("items", path: "/items", paging: .none), #"row 0: "url" = "///" has no path component"#),
        (#"{"results":[{"url":5}]}"#, Resource.list("items", path: "/items", paging: .none), "row 0 has no string \"url\" to take its ID from"),
        (#"[{"id":1,"s":"\ud800"}]"#, Resource(collection: "items", path: "/items", rows: .rootArray, id: .field("id")),
         #"body is not JSON (23 bytes, starting "[{\"id\":1,\"s\":\"\\ud800\"}]"): invalid escape sequence at byte 14"#),
    ]

    @Test("bodies of the wrong shape fail with a reason naming the problem", arguments: failures)
    func failure(body: String, resource: Resource, reason: String) {
        #expect(throws: RowExtraction.Failure.self) { try extract(body, resource) }
        do { _ = try extract(body, resource) } catch { #expect(error.reason == reason) }
    }

    @Test("invalid UTF-8 and nesting deeper than 512 are typed failures, not crashes")
    func hostileBodies() throws {
        let badUTF8 = Data([UInt8](#"[{"id":1,"s":""#.utf8) + [0xC3, 0x28] + [UInt8](#""}]"#.utf8))
        do { _ = try RowExtraction.extract(badUTF8, for: array); Issue.record("no error") } catch {
            #expect(error.reason.hasSuffix("invalid UTF-8 at byte 14"))
        }
        let deep = Data(("[{\"id\":1,\"x\":" + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}]").utf8)
        do { _ = try RowExtraction.extract(deep, for: array); Issue.record("no error") } catch {
            #expect(error.reason.hasSuffix("arrays and objects nested deeper than 512 at byte 523"))
        }
    }

    @Test("every real fixture row holds the same values as JSONSerialization reads from the server's bytes")
    func fixturesKeepTheirValues() throws {
        let index = try decompressedFixture("pokeapi/api/v2/pokemon/index.json.gz")
        let listRows = try RowExtraction.extract(index, for: Resource.list("pokemon", path: "/p", paging: .none)).rows
        let listObjects = try #require((try JSONSerialization.jsonObject(with: index) as? [String: Any])?["results"] as? [Any])
        #expect(listRows.count == listObjects.count)
        for (row, object) in zip(listRows, listObjects) {
            #expect(try NSDictionary(dictionary: #require(JSONSerialization.jsonObject(with: row.json) as? [String: Any])).isEqual(object))
        }
        for id in [1, 25, 151] {
            let body = try decompressedFixture("pokeapi/api/v2/pokemon/\(id).json.gz")
            let row = try #require(try RowExtraction.extract(body, for: Resource.document("p", path: "/p")).rows.first)
            #expect(row.id == String(id))
            let expected = try #require(JSONSerialization.jsonObject(with: body) as? NSDictionary)
            #expect(try #require(JSONSerialization.jsonObject(with: row.json) as? NSDictionary).isEqual(expected))
            // Already minified with sorted keys: the canonical bytes are the server's bytes.
            #expect(row.json == body)
        }
    }

    @Test("a canonical row copied whole has the bytes the writer gives the same row spread out with white space and escapes")
    func copiedWholeMatchesRewritten() throws {
        for id in [1, 25, 151] {
            let body = try decompressedFixture("pokeapi/api/v2/pokemon/\(id).json.gz")
            let pretty = try JSONSerialization.data(withJSONObject: JSONSerialization.jsonObject(with: body), options: [.prettyPrinted])
            let fast = try #require(try RowExtraction.extract(body, for: document).rows.first)
            let slow = try #require(try RowExtraction.extract(pretty, for: document).rows.first)
            #expect(fast.json == slow.json)
            #expect(fast.json == body)
        }
        // A clean object nested in one that is not, with escapes the writer keeps and ones it rewrites.
        let texts = try rowTexts(#"[{"id":1,"b":{"c":"x\"y\n","d":[1,{"e":"\/"},{"f":"\u0041"}]},"a":{"k":"\t","l":[]}}]"#, array)
        #expect(texts == [#"{"a":{"k":"\t","l":[]},"b":{"c":"x\"y\n","d":[1,{"e":"/"},{"f":"A"}]},"id":1}"#])
    }
}
