import Foundation
import Testing
@testable import Freshet

@Suite("Decoding rows with RowDecoder, compared with JSONDecoder")
struct RowDecoderTests {
    /// The outcome of a decode as text: the value, or the DecodingError's case, type or key, and coding path.
    static func outcome<T: Decodable & Equatable>(_ type: T.Type, _ decode: () throws -> T) -> String {
        do {
            return "value \(try decode())"
        } catch let error as DecodingError {
            func path(_ c: DecodingError.Context) -> String { c.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".") }
            switch error {
            case .typeMismatch(let t, let c): return "typeMismatch \(t) at \(path(c))"
            case .valueNotFound(let t, let c): return "valueNotFound \(t) at \(path(c))"
            case .keyNotFound(let k, let c): return "keyNotFound \(k.stringValue) at \(path(c))"
            case .dataCorrupted(let c): return "dataCorrupted at \(path(c))"
            @unknown default: return "unknown \(error)"
            }
        } catch {
            return "other \(error)"
        }
    }

    static func same<T: Decodable & Equatable>(_ type: T.Type, _ json: Data, sourceLocation: SourceLocation = #_sourceLocation) {
        // Values are compared as values: a dictionary's description has no fixed order.
        if let expected = try? JSONDecoder().decode(T.self, from: json), let decoded = try? RowDecoder().decode(T.self, from: json) {
            #expect(decoded == expected, sourceLocation: sourceLocation)
            return
        }
        let foundation = outcome(T.self) { try JSONDecoder().decode(T.self, from: json) }
        let ours = outcome(T.self) { try RowDecoder().decode(T.self, from: json) }
        if foundation == "dataCorrupted at " {
            // JSONDecoder reports a number that does not fit as invalid JSON with no path;
            // RowDecoder names the number's path.
            #expect(ours.hasPrefix("dataCorrupted at "), sourceLocation: sourceLocation)
        } else {
            #expect(ours == foundation, sourceLocation: sourceLocation)
        }
    }

    @Test("every PokeAPI list row and detail document decodes to the same values")
    func pokeAPI() throws {
        let index = try decompressedFixture("pokeapi/api/v2/pokemon/index.json.gz")
        let rows = try RowExtraction.extract(index, for: Resource.list("p", path: "/p", paging: .none)).rows
        #expect(rows.count > 1000)
        for row in rows { Self.same(ListEntryRow.self, row.json) }
        let decoded = try rows.map { try RowDecoder().decode(ListEntryRow.self, from: $0.json) }
        #expect(decoded == rows.map { (try? JSONDecoder().decode(ListEntryRow.self, from: $0.json)) })
        for id in 1...151 {
            let body = try decompressedFixture("pokeapi/api/v2/pokemon/\(id).json.gz")
            let row = try #require(try RowExtraction.extract(body, for: Resource.document("p", path: "/p")).rows.first)
            let ours = try RowDecoder().decode(FullPokemon.self, from: row.json)
            #expect(ours == (try JSONDecoder().decode(FullPokemon.self, from: body)))
            // AnyJSON tries each kind in turn; every miss throws, and Swift Testing records a
            // backtrace per thrown error, so only a few documents.
            if [1, 25, 151].contains(id) {
                #expect(try RowDecoder().decode(AnyJSON.self, from: row.json) == (try JSONDecoder().decode(AnyJSON.self, from: body)))
            }
        }
    }

    @Test("every JSONPlaceholder todo, comment and user decodes to the same values")
    func jsonPlaceholder() throws {
        let database = try decompressedFixture("jsonplaceholder/data.json.gz")
        func rows(_ key: String) throws -> [Row] {
            try RowExtraction.extract(database, for: Resource.list(key, path: "/x", rowsAt: key, id: .field("id"), paging: .none)).rows
        }
        let todos = try rows("todos"), comments = try rows("comments"), users = try rows("users")
        #expect([todos.count, comments.count, users.count] == [Int]([200, 500, 10]))
        for r in todos { #expect(try RowDecoder().decode(TodoRow.self, from: r.json) == (try JSONDecoder().decode(TodoRow.self, from: r.json))) }
        for r in comments { #expect(try RowDecoder().decode(CommentRow.self, from: r.json) == (try JSONDecoder().decode(CommentRow.self, from: r.json))) }
        for r in users { #expect(try RowDecoder().decode(UserRow.self, from: r.json) == (try JSONDecoder().decode(UserRow.self, from: r.json))) }
        let snapshot = Snapshot(collection: "todos", rows: todos, syncMark: nil, status: .fresh, lsn: .zero)
        #expect(try snapshot.decodeRows(TodoRow.self) == todos.map { try JSONDecoder().decode(TodoRow.self, from: $0.json) })
        #expect(try snapshot.lazyRows(TodoRow.self).map { try $0.get() } == snapshot.decodeRows(TodoRow.self))
    }

    static let todoCases: [String] = [
        #"{"userId":1,"id":2,"title":"t","completed":true}"#,
        #"{"userId":1,"id":"2","title":"t","completed":true}"#,
        #"{"userId":1,"id":2,"completed":true}"#,
        #"{"userId":1,"id":2,"title":null,"completed":true}"#,
        #"{"userId":1,"id":2,"title":"t","completed":1}"#,
        #"{"userId":1.5,"id":2,"title":"t","completed":true}"#,
        #"{"userId":2.0,"id":1e2,"title":"t","completed":false}"#,
        #"{"userId":99999999999999999999,"id":2,"title":"t","completed":true}"#,
        #"{"userId":1,"id":2,"title":"\u00e9\ud834\udd1e\n","completed":true,"title":"last"}"#,
        #"[]"#,
        #"null"#,
        #"not json"#,
    ]

    @Test("one decoder reused row after row gives each row what a fresh decoder gives, also after a failed row")
    func reusedDecoder() throws {
        let reused = TapeDecoder()
        // Every todo case twice, in order and reversed, so each follows a longer, a shorter,
        // a failed and a nested one.
        let cases = Self.todoCases + Self.todoCases.reversed()
        for json in cases {
            let data = Data(json.utf8)
            let fresh = Self.outcome(TodoRow.self) { try RowDecoder().decode(TodoRow.self, from: data) }
            #expect(Self.outcome(TodoRow.self) { try reused.decodeRow(TodoRow.self, from: data) } == fresh, "\(json)")
        }
        for json in Self.nestedCases + Self.nestedCases.reversed() {
            let data = Data(json.utf8)
            let fresh = Self.outcome(Nested.self) { try RowDecoder().decode(Nested.self, from: data) }
            #expect(Self.outcome(Nested.self) { try reused.decodeRow(Nested.self, from: data) } == fresh, "\(json)")
        }
        // A detail document (thousands of nodes, nested containers) between two list rows.
        let body = try decompressedFixture("pokeapi/api/v2/pokemon/6.json.gz")
        let document = try #require(try RowExtraction.extract(body, for: Resource.document("p", path: "/p")).rows.first)
        let entry = Data(#"{"name":"charizard","url":"https://pokeapi.co/api/v2/pokemon/6/"}"#.utf8)
        #expect(try reused.decodeRow(NamedRef.self, from: entry) == NamedRef(name: "charizard", url: "https://pokeapi.co/api/v2/pokemon/6/"))
        #expect(try reused.decodeRow(FullPokemon.self, from: document.json) == (try JSONDecoder().decode(FullPokemon.self, from: body)))
        #expect(try reused.decodeRow(NamedRef.self, from: entry) == NamedRef(name: "charizard", url: "https://pokeapi.co/api/v2/pokemon/6/"))
    }

    @Test("a snapshot decodes rows of every shape in order and names the first row that does not fit")
    func snapshotReusesDecoder() throws {
        let good = [#"{"userId":1,"id":1,"title":"a","completed":true}"#,
                    #"{"completed":false,"id":2,"title":"a much longer title \u00e9 with an escape","userId":7}"#,
                    #"{"userId":1,"id":3,"title":"c","completed":true,"extra":{"deep":[1,2,{"x":null}]}}"#]
        let rows = good.enumerated().map { Row(id: "r\($0.offset)", json: Data($0.element.utf8)) }
        let snapshot = Snapshot(collection: "todos", rows: rows, syncMark: nil, status: .fresh, lsn: .zero)
        #expect(try snapshot.decodeRows(TodoRow.self) == [TodoRow(userId: 1, id: 1, title: "a", completed: true),
                                                          TodoRow(userId: 7, id: 2, title: "a much longer title é with an escape", completed: false),
                                                          TodoRow(userId: 1, id: 3, title: "c", completed: true)])
        #expect(try snapshot.decodeIdentifiedRows(TodoRow.self).map(\.id) == ["r0", "r1", "r2"])
        let bad = Snapshot(collection: "todos", rows: rows + [Row(id: "r3", json: Data(#"{"userId":1,"id":"4","title":"d","completed":true}"#.utf8))] + rows,
                           syncMark: nil, status: .fresh, lsn: .zero)
        #expect(throws: RowDecodingError.self) { try bad.decodeRows(TodoRow.self) }
        do {
            _ = try bad.decodeRows(TodoRow.self)
        } catch let error as RowDecodingError {
            #expect(error.rowID == "r3")
        }
    }

    @Test("a todo decodes, or fails with the same error case and coding path", arguments: todoCases)
    func todoOutcomes(json: String) { Self.same(TodoRow.self, Data(json.utf8)) }

    static let scalarCases: [String] = [
        #"{}"#,
        #"{"i8":-128,"u8":255,"i":-9223372036854775808,"u":18446744073709551615,"u64":0}"#,
        #"{"i8":128}"#, #"{"u8":-1}"#, #"{"u":-1}"#, #"{"i":9223372036854775808}"#, #"{"i":1.5}"#, #"{"i":"1"}"#,
        #"{"f":1.5,"d":-2.5e-3}"#, #"{"f":1e39}"#, #"{"d":1e400}"#, #"{"d":123456789012345678901234567890}"#, #"{"d":0.1}"#,
        #"{"date":0}"#, #"{"date":7.25e8}"#, #"{"date":"2026-01-01"}"#,
        #"{"data":"aGVsbG8="}"#, #"{"data":"not base64!"}"#, #"{"data":[1,2]}"#,
        #"{"url":"https://example.com/a?b=c"}"#, #"{"url":""}"#, #"{"url":1}"#,
        #"{"decimal":1.25}"#, #"{"decimal":"1.25"}"#,
        #"{"ints":{"1":"a","2":"b"}}"#, #"{"ints":{"x":"a"}}"#, #"{"ints":[]}"#,
        #"{"i":null,"d":null,"url":null}"#,
    ]

    @Test("numbers, dates, data, URLs, decimals and dictionaries decode like JSONDecoder's defaults", arguments: scalarCases)
    func scalarOutcomes(json: String) { Self.same(Scalars.self, Data(json.utf8)) }

    @Test("-0 decodes to -0.0 as a Double and a Float, as JSONDecoder reads it (-0.0 == 0.0, so the sign is checked)")
    func negativeZero() throws {
        let json = Data(#"{"d":-0,"f":-0,"i":-0}"#.utf8)
        let foundation = try JSONDecoder().decode(Scalars.self, from: json)
        let ours = try RowDecoder().decode(Scalars.self, from: json)
        #expect(foundation.d?.sign == .minus)
        #expect(ours.d?.sign == .minus)
        #expect(ours.f?.sign == .minus)
        #expect(ours.i == 0)
        let positive = try RowDecoder().decode(Scalars.self, from: Data(#"{"d":0}"#.utf8))
        #expect(positive.d?.sign == .plus)
    }

    static let nestedCases: [String] = [
        #"{"a":{"b":[[1,2],[3,4]]}}"#,
        #"{"a":{"b":[[1,2],[3]]}}"#,
        #"{"a":{"b":[[1,2],[3,"x"]]}}"#,
        #"{"a":{"b":[[1,2],{}]}}"#,
        #"{"a":{"b":{}}}"#,
        #"{"a":{"c":1}}"#,
        #"{"a":[]}"#,
    ]

    @Test("errors inside nested containers carry every key on the way", arguments: nestedCases)
    func nestedOutcomes(json: String) { Self.same(Nested.self, Data(json.utf8)) }

    static let detailMutations: [(String, String)] = [
        (#""slot":1"#, #""slot":"one""#),
        (#""slot":3"#, #""slot":300"#),
        (#""base_stat":35"#, #""base_stat":-35"#),
        (#""is_default":true"#, #""is_default":null"#),
        (#""level_learned_at":0"#, #""level_learned_at":false"#),
        (#""front_default":"https:"#, #""front_default":7,"x":"https:"#),
        (#""types":[{"slot":1,"type":{"name":"electric","url":"/api/v2/type/13/"}}]"#, #""types":[{"slot":1,"type":{"name":"electric"}}]"#),
    ]

    @Test("a real detail document with one value broken fails with the same error and path as JSONDecoder", arguments: detailMutations)
    func detailErrors(original: String, replacement: String) throws {
        let body = String(decoding: try decompressedFixture("pokeapi/api/v2/pokemon/25.json.gz"), as: UTF8.self)
        let range = try #require(body.range(of: original))
        let broken = body.replacingCharacters(in: range, with: replacement)
        let foundation = Self.outcome(FullPokemon.self) { try JSONDecoder().decode(FullPokemon.self, from: Data(broken.utf8)) }
        #expect(foundation.hasPrefix("value") == false)
        Self.same(FullPokemon.self, Data(broken.utf8))
    }

    @Test("a JSONDecoder with other settings is used as it is")
    func customDecoderIsUsed() throws {
        let row = Row(id: "1", json: Data(#"{"user_id":1,"id":2,"title":"t","completed":true}"#.utf8))
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try row.decode(TodoRow.self, using: decoder) == TodoRow(userId: 1, id: 2, title: "t", completed: true))
        #expect(throws: DecodingError.self) { try row.decode(TodoRow.self) }
        #expect(JSONDecoder().hasDefaultSettings)
        #expect(!decoder.hasDefaultSettings)
    }
}
