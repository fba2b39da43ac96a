import Foundation
import Testing
@testable import Freshet

@Suite("Reading JSON onto a tape")
struct JSONTapeTests {
    func parse(_ bytes: [UInt8], maxDepth: Int = JSONTape.defaultMaxDepth) throws(JSONError) -> JSONTape {
        let result: Result<JSONTape, JSONError> = bytes.withUnsafeBufferPointer { buffer in
            do throws(JSONError) { return .success(try JSONTape(parsing: buffer, maxDepth: maxDepth)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    func error(_ text: String) -> JSONError? { error(Array(text.utf8)) }
    func error(_ bytes: [UInt8], maxDepth: Int = JSONTape.defaultMaxDepth) -> JSONError? {
        do { _ = try parse(bytes, maxDepth: maxDepth); return nil } catch { return error }
    }

    @Test("a document becomes one node per value in document order, with subtree ends")
    func nodesInOrder() throws {
        let tape = try parse(Array(#" {"a": [1, "x\n", true], "b": null} "#.utf8))
        #expect(tape.nodes.map(\.kind) == [.object, .string, .array, .number, .string, .true, .string, .null])
        #expect(tape[0].count == 2)
        #expect(tape[0].next == 8)
        #expect(tape[2].count == 3)
        #expect(tape[2].next == 6)
        #expect(tape[4].flag)        // "x\n" has an escape
        #expect(tape[3].flag)        // 1 is an integer
    }

    static let malformed: [(text: String, error: JSONError)] = [
        ("", JSONError(.unexpectedEnd, at: 0)),
        ("   ", JSONError(.unexpectedEnd, at: 3)),
        ("{\"a\":1", JSONError(.unexpectedEnd, at: 6)),
        ("{\"a\" 1}", JSONError(.unexpectedByte(UInt8(ascii: "1")), at: 5)),
        ("[1,]", JSONError(.unexpectedByte(UInt8(ascii: "]")), at: 3)),
        ("{\"a\":1,}", JSONError(.unexpectedByte(UInt8(ascii: "}")), at: 7)),
        ("01", JSONError(.trailingContent, at: 1)),
        ("-", JSONError(.invalidNumber, at: 0)),
        ("1.", JSONError(.invalidNumber, at: 0)),
        ("1e+", JSONError(.invalidNumber, at: 0)),
        ("tru", JSONError(.unexpectedEnd, at: 3)),
        ("nul1", JSONError(.unexpectedByte(UInt8(ascii: "1")), at: 3)),
        ("\"a\u{01}\"", JSONError(.controlCharacterInString, at: 2)),
        (#""\x""#, JSONError(.invalidEscape, at: 1)),
        (#""\u12G4""#, JSONError(.invalidEscape, at: 5)),
        (#""\uDC00""#, JSONError(.invalidEscape, at: 1)),
        (#""\uD800x""#, JSONError(.invalidEscape, at: 1)),
        (#""\uD800\u0041""#, JSONError(.invalidEscape, at: 1)),
        ("[1] [2]", JSONError(.trailingContent, at: 4)),
        ("NaN", JSONError(.unexpectedByte(UInt8(ascii: "N")), at: 0)),
    ]

    @Test("malformed JSON is a typed error at the exact byte", arguments: malformed)
    func malformedInput(text: String, expected: JSONError) {
        #expect(error(text) == expected)
    }

    static let badUTF8: [(bytes: [UInt8], offset: Int)] = [
        ([0x22, 0xFF, 0x22], 1),                    // never valid
        ([0x22, 0xC0, 0xAF, 0x22], 1),              // overlong "/"
        ([0x22, 0xE0, 0x80, 0xAF, 0x22], 1),        // overlong
        ([0x22, 0xED, 0xA0, 0x80, 0x22], 1),        // UTF-16 surrogate D800 in UTF-8
        ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], 1),  // above U+10FFFF
        ([0x22, 0x61, 0xE2, 0x82, 0x22], 2),        // truncated sequence
        ([0x22, 0x80, 0x22], 1),                    // lone continuation byte
    ]

    @Test("strings that are not UTF-8 are rejected (RFC 8259 §8.1, Unicode table 3-7)", arguments: badUTF8)
    func invalidUTF8(bytes: [UInt8], offset: Int) {
        #expect(error(bytes) == JSONError(.invalidUTF8, at: offset))
    }

    @Test("valid multi-byte UTF-8, escapes and surrogate pairs resolve to the same text JSONSerialization reads")
    func unicode() throws {
        let text = #"["é€𝄞", "\u00e9\u20ac\ud834\udd1e", "\"\\\/\b\f\n\r\t"]"#
        let bytes = Array(text.utf8)
        let tape = try parse(bytes)
        let expected = try #require(JSONSerialization.jsonObject(with: Data(bytes)) as? [String])
        let strings = bytes.withUnsafeBufferPointer { b in tape.children(of: 0).map { tape.string(at: $0, in: b) } }
        #expect(strings == expected)
        #expect(strings[0] == strings[1])
    }

    @Test("nesting deeper than the limit is an error; at the limit it is read")
    func depthLimit() throws {
        let atLimit = Array(String(repeating: "[", count: 512) + String(repeating: "]", count: 512)).map { UInt8($0.asciiValue ?? 0) }
        #expect(try parse(atLimit).nodes.count == 512)
        let tooDeep = Array(String(repeating: "[", count: 513) + String(repeating: "]", count: 513)).map { UInt8($0.asciiValue ?? 0) }
        #expect(error(tooDeep) == JSONError(.tooDeep(maxDepth: 512), at: 512))
        // 100,000 levels fail without exhausting the stack.
        let hostile = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        #expect(error(hostile) == JSONError(.tooDeep(maxDepth: 512), at: 512))
        #expect(error(Array(#"{"a":{"b":[1]}}"#.utf8), maxDepth: 2) == JSONError(.tooDeep(maxDepth: 2), at: 10))
    }

    @Test("a UTF-8 byte order mark before the value is skipped")
    func byteOrderMark() throws {
        #expect(try parse([0xEF, 0xBB, 0xBF] + Array("[1]".utf8)).nodes.map(\.kind) == [.array, .number])
    }

    @Test("a container is marked canonical exactly when its bytes are minified, keys strictly ascending and escapes canonical", arguments: [
        (#"{"a":1,"b":[1,"x"],"c":{}}"#, true),
        (#"["x\"y\n\t\\",{"a":null}]"#, true),
        (#"{"b":1,"a":2}"#, false),
        (#"{"a":1,"a":2}"#, false),
        (#"{"a": 1}"#, false),
        (#"[1 ,2]"#, false),
        (#"["\/"]"#, false),
        (#"["\u0041"]"#, false),
        (#"{"a\n":1}"#, false),
        (#"{"ab":1,"b":2}"#, true),
        (#"{"b":1,"ab":2}"#, false),
        (#"{"a":1,"ab":2}"#, true),
    ])
    func canonicalMark(text: String, canonical: Bool) throws {
        let tape = try parse(Array(text.utf8))
        #expect(tape[0].flag == canonical)
    }

    @Test("strings longer than eight bytes are read to their end: quotes, escapes, control bytes and UTF-8 at every offset")
    func longStrings() throws {
        for offset in 0..<17 {
            let pad = String(repeating: "p", count: offset)
            let text = Array(#"["\#(pad)é\#(pad)\"\#(pad)","\#(pad)abcdefghij"]"#.utf8)
            let tape = try parse(text)
            #expect(tape.nodes.map(\.kind) == [.array, .string, .string])
            let strings = text.withUnsafeBufferPointer { [tape.string(at: 1, in: $0), tape.string(at: 2, in: $0)] }
            #expect(strings == ["\(pad)é\(pad)\"\(pad)", "\(pad)abcdefghij"])
            #expect(error(Array("[\"\(pad)abcdefgh".utf8) + [0x01] + Array("\"]".utf8)) == JSONError(.controlCharacterInString, at: 2 + offset + 8))
            #expect(error(Array("[\"\(pad)abcdefgh".utf8) + [0xFF] + Array("\"]".utf8)) == JSONError(.invalidUTF8, at: 2 + offset + 8))
        }
    }
}
