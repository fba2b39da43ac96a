import Foundation
import Testing
@testable import Freshet

/// The parser's fast paths (docs/performance.md, round 7): the 8-byte string scan, the
/// 4-byte literal compare, the explicit container stack and the node storage that grows.
@Suite("The JSON parser's fast paths")
struct JSONParserFastPathTests {
    /// The tape suite's helpers: `parse` a document, or the `error` it fails with.
    let tapes = JSONTapeTests()

    func text(_ tape: JSONTape, _ index: Int, _ bytes: [UInt8]) -> String {
        bytes.withUnsafeBufferPointer { tape.string(at: index, in: $0) }
    }

    /// A one-string document `"` + `pad` a's + `middle` + `tail` b's + `"`.
    func document(pad: Int, _ middle: [UInt8], tail: Int) -> [UInt8] {
        [0x22] + [UInt8](repeating: 0x61, count: pad) + middle + [UInt8](repeating: 0x62, count: tail) + [0x22]
    }

    @Test("an escape is read at every position of an 8-byte word, and its string ends at its closing quote", arguments: [
        (#"\""#, "\""), (#"\\"#, "\\"), (#"\n"#, "\n"), (#"\/"#, "/"), (#"\u00e9"#, "é"), (#"\ud834\udd1e"#, "𝄞"),
    ])
    func escapesAtEveryOffset(escape: String, resolved: String) throws {
        for pad in 0..<17 {
            for tail in [0, 1, 7, 8, 9] {
                let bytes = document(pad: pad, Array(escape.utf8), tail: tail)
                let tape = try tapes.parse(bytes)
                #expect(tape.count == 1)
                #expect(tape[0].kind == .string)
                #expect(tape[0].flag)
                #expect(tape[0].start == 1)
                #expect(Int(tape[0].end) == bytes.count - 1)
                #expect(text(tape, 0, bytes) == String(repeating: "a", count: pad) + resolved + String(repeating: "b", count: tail))
            }
        }
    }

    @Test("UTF-8 of 2, 3 and 4 bytes is read across 8-byte boundaries", arguments: ["é", "€", "𝄞", "é€𝄞"])
    func multiByteAcrossWords(character: String) throws {
        for pad in 0..<17 {
            let bytes = document(pad: pad, Array(character.utf8), tail: 9)
            let tape = try tapes.parse(bytes)
            #expect(tape[0].kind == .string)
            #expect(!tape[0].flag)
            #expect(Int(tape[0].end) == bytes.count - 1)
            #expect(text(tape, 0, bytes) == String(repeating: "a", count: pad) + character + String(repeating: "b", count: 9))
        }
    }

    @Test("invalid UTF-8, control bytes and a missing closing quote are found at their exact offset at every position of a word")
    func errorsAtEveryOffset() {
        for pad in 0..<17 {
            for tail in [0, 3, 8] {
                // The offending byte is at 1 + pad.
                #expect(tapes.error(document(pad: pad, [0xFF], tail: tail)) == JSONError(.invalidUTF8, at: 1 + pad))
                #expect(tapes.error(document(pad: pad, [0xC3, 0x28], tail: tail)) == JSONError(.invalidUTF8, at: 1 + pad))   // bad continuation
                #expect(tapes.error(document(pad: pad, [0xED, 0xA0, 0x80], tail: tail)) == JSONError(.invalidUTF8, at: 1 + pad))   // a surrogate
                #expect(tapes.error(document(pad: pad, [0x80], tail: tail)) == JSONError(.invalidUTF8, at: 1 + pad))   // a lone continuation
                #expect(tapes.error(document(pad: pad, [0x00], tail: tail)) == JSONError(.controlCharacterInString, at: 1 + pad))
                #expect(tapes.error(document(pad: pad, [0x1F], tail: tail)) == JSONError(.controlCharacterInString, at: 1 + pad))
                #expect(tapes.error(document(pad: pad, [0x5C, 0x71], tail: tail)) == JSONError(.invalidEscape, at: 1 + pad))   // \q
            }
            // Unterminated, and a multi-byte sequence cut off by the end of the input.
            let open = [0x22] + [UInt8](repeating: 0x61, count: pad)
            #expect(tapes.error(open) == JSONError(.unexpectedEnd, at: 1 + pad))
            #expect(tapes.error(open + [0xE2, 0x82]) == JSONError(.invalidUTF8, at: 1 + pad))
            #expect(tapes.error(open + [0x5C]) == JSONError(.unexpectedEnd, at: 2 + pad))
        }
    }

    @Test("a string of 100,000 bytes with one escape near its end is one node spanning all of it")
    func longString() throws {
        let bytes = document(pad: 99_990, Array(#"\t"#.utf8), tail: 8)
        let tape = try tapes.parse(bytes)
        #expect(tape.count == 1)
        #expect(tape[0].flag)
        #expect(tape[0].end == 100_000 + 1)
        #expect(text(tape, 0, bytes) == String(repeating: "a", count: 99_990) + "\t" + String(repeating: "b", count: 8))
        #expect(tapes.error(Array(bytes.dropLast())) == JSONError(.unexpectedEnd, at: bytes.count - 1))
    }

    @Test("literals are read whole, and a broken or cut-off one fails at its first wrong byte", arguments: [
        ("[true,false,null]", nil),
        ("true", nil), ("false", nil), ("null", nil),
        ("[true", JSONError(.unexpectedEnd, at: 5)),
        ("fals", JSONError(.unexpectedEnd, at: 4)),
        ("falsE", JSONError(.unexpectedByte(UInt8(ascii: "E")), at: 4)),
        ("nulL", JSONError(.unexpectedByte(UInt8(ascii: "L")), at: 3)),
        ("trUe", JSONError(.unexpectedByte(UInt8(ascii: "U")), at: 2)),
        ("[tru]", JSONError(.unexpectedByte(UInt8(ascii: "]")), at: 4)),
        ("[falsey]", JSONError(.unexpectedByte(UInt8(ascii: "y")), at: 6)),
    ] as [(String, JSONError?)])
    func literals(text: String, expected: JSONError?) {
        #expect(tapes.error(Array(text.utf8)) == expected)
    }

    @Test("numbers: integers are flagged, fractions and exponents are not, and a bad one fails at its start")
    func numbers() throws {
        let tape = try tapes.parse(Array("[0,-12,1.5,2E-3,-0,7e+2,123456789012345678901]".utf8))
        #expect(tape.nodes.dropFirst().map(\.flag) == [true, true, false, false, true, false, true])
        #expect(tape.nodes.dropFirst().map { Int($0.end - $0.start) } == [1, 3, 3, 4, 2, 4, 21])
        #expect(tapes.error(Array("[1.5e]".utf8)) == JSONError(.invalidNumber, at: 1))
        #expect(tapes.error(Array("[-x]".utf8)) == JSONError(.invalidNumber, at: 1))
        #expect(tapes.error(Array("[1.]".utf8)) == JSONError(.invalidNumber, at: 1))
    }

    @Test("nesting deeper than the first stack of open containers (16 levels) keeps every level's counts and ends")
    func deepNesting() throws {
        // 40 arrays, each holding the next and then a 1: [[[…[1],1]…,1],1]
        let depth = 40
        let bytes = Array((String(repeating: "[", count: depth) + "1" + String(repeating: ",1]", count: depth)).utf8)
        let tape = try tapes.parse(bytes)
        #expect(tape.count == depth + 1 + depth)
        for level in 0..<depth {
            #expect(tape[level].kind == .array)
            #expect(tape[level].count == 2)
            // Array `level` ends where its `]` is: counted from the back, one `,1]` per level.
            #expect(Int(tape[level].end) == bytes.count - 3 * level)
            #expect(Int(tape[level].next) == tape.count - level)
            #expect(tape[level].flag)
        }
        // Objects too, with a key order broken only at the innermost level.
        let objects = Array((String(repeating: #"{"a":"#, count: 20) + #"{"b":1,"a":2}"# + String(repeating: "}", count: 20)).utf8)
        let t = try tapes.parse(objects)
        #expect(t.nodes.filter { $0.kind == .object }.map(\.flag) == [Bool](repeating: false, count: 21))
        #expect(t[0].count == 1)
        #expect(Int(t[0].end) == objects.count)
    }

    @Test("a document with far more values than the first guess of the node storage grows it and keeps every node")
    func manyNodes() throws {
        // One node per 2 bytes: four times the first guess (one per 8 bytes).
        let n = 50_000
        let bytes = Array(("[" + [String](repeating: "1", count: n).joined(separator: ",") + "]").utf8)
        let tape = try tapes.parse(bytes)
        #expect(tape.count == n + 1)
        #expect(tape[0].count == UInt32(n))
        #expect(tape[0].next == UInt32(n + 1))
        #expect(tape[n].start == UInt32(bytes.count - 2))
        #expect(tape[n].next == UInt32(n + 1))
    }

    @Test("keys: sorted ones keep an object canonical, unsorted, duplicate or escaped ones do not, at any length", arguments: [
        (#"{"abcdefghi":1,"abcdefghj":2}"#, [true]),
        (#"{"abcdefghj":1,"abcdefghi":2}"#, [false]),
        (#"{"abcdefghij":1,"abcdefghij":2}"#, [false]),
        (#"{"abcdefgh":1,"abcdefghi":2}"#, [true]),
        (#"{"a":{"b":1,"a":2},"b":{"a":1}}"#, [false, false, true]),
        (#"{"a":{"a":1},"b":{"a":1,"b":2}}"#, [true, true, true]),
        (#"{"\u0061":1}"#, [false]),
        (#"{"a\"":1}"#, [false]),
    ])
    func keyOrder(text: String, flags: [Bool]) throws {
        let tape = try tapes.parse(Array(text.utf8))
        #expect(tape.nodes.filter { $0.kind == .object }.map(\.flag) == flags)
    }

    @Test("white space around `:` and `,` (checked only when the byte there is not the one expected) is read on either side", arguments: [
        #"{"a" :1,"b":2}"#, #"{"a": 1,"b":2}"#, #"{"a"\#t:\#n1,"b":2}"#, #"{"a":1 ,"b":2}"#, #"{"a":1, "b":2}"#,
        #"{"a":1,"b":2 }"#, #"{ "a":1,"b":2}"#, #"{"a":1,"b":2\#r\#n}"#,
    ])
    func whiteSpaceAroundSeparators(text: String) throws {
        let tape = try tapes.parse(Array(text.utf8))
        let minified = try tapes.parse(Array(#"{"a":1,"b":2}"#.utf8))
        #expect(tape.nodes.map(\.kind) == minified.nodes.map(\.kind))
        #expect(tape.nodes.map(\.count) == minified.nodes.map(\.count))
        #expect(tape.nodes.map(\.next) == minified.nodes.map(\.next))
        // Only the object's flag changes: it is not canonical.
        #expect(!tape[0].flag)
        #expect(minified[0].flag)
    }

    @Test("a missing or wrong separator fails at its exact offset, with or without white space before it", arguments: [
        (#"{"a" 1}"#, JSONError(.unexpectedByte(UInt8(ascii: "1")), at: 5)),
        (#"{"a"1}"#, JSONError(.unexpectedByte(UInt8(ascii: "1")), at: 4)),
        (#"{"a";1}"#, JSONError(.unexpectedByte(UInt8(ascii: ";")), at: 4)),
        (#"{"a""#, JSONError(.unexpectedEnd, at: 4)),
        (#"{"a" "#, JSONError(.unexpectedEnd, at: 5)),
        (#"{"a":"#, JSONError(.unexpectedEnd, at: 5)),
        (#"{"a": "#, JSONError(.unexpectedEnd, at: 6)),
        (#"{"a":1 x}"#, JSONError(.unexpectedByte(UInt8(ascii: "x")), at: 7)),
        (#"{"a":1x}"#, JSONError(.unexpectedByte(UInt8(ascii: "x")), at: 6)),
        (#"[1 "#, JSONError(.unexpectedEnd, at: 3)),
        (#"[1,"#, JSONError(.unexpectedEnd, at: 3)),
        (#"[1, "#, JSONError(.unexpectedEnd, at: 4)),
        (#"[1 ,]"#, JSONError(.unexpectedByte(UInt8(ascii: "]")), at: 4)),
    ] as [(String, JSONError)])
    func separatorErrors(text: String, expected: JSONError) {
        #expect(tapes.error(Array(text.utf8)) == expected)
    }

    @Test("a tape parsed again reuses its storage and gives what a fresh parse gives; a copy keeps the old nodes")
    func reparse() throws {
        let big = Array(("[" + [String](repeating: #"{"a":[1,"x"]}"#, count: 500).joined(separator: ",") + "]").utf8)
        let small = Array(#"{"b":true}"#.utf8)
        var tape = JSONTape()
        try big.withUnsafeBufferPointer { try tape.reparse($0) }
        let copy = tape
        try small.withUnsafeBufferPointer { try tape.reparse($0) }
        #expect(tape.nodes == (try tapes.parse(small)).nodes)
        #expect(copy.nodes == (try tapes.parse(big)).nodes)
        #expect(copy.count == 1 + 500 * 5)
        // A failed parse leaves no nodes; the next one works.
        let broken = Array(#"{"b":tru"#.utf8)
        #expect(throws: JSONError(.unexpectedEnd, at: 8)) { try broken.withUnsafeBufferPointer { try tape.reparse($0) } }
        #expect(tape.count == 0)
        try big.withUnsafeBufferPointer { try tape.reparse($0) }
        #expect(tape.nodes == copy.nodes)
    }

    @Test("every fixture detail document is canonical, and its pretty-printed form parses to the same values")
    func fixtureDocuments() throws {
        for id in [1, 6, 25, 151] {
            let bytes = try Array(decompressedFixture("pokeapi/api/v2/pokemon/\(id).json.gz"))
            let tape = try tapes.parse(bytes)
            #expect(tape[0].flag)
            #expect(Int(tape[0].end) == bytes.count)
            let pretty = try JSONSerialization.data(withJSONObject: JSONSerialization.jsonObject(with: Data(bytes)), options: [.prettyPrinted, .sortedKeys])
            let prettyTape = try tapes.parse(Array(pretty))
            #expect(!prettyTape[0].flag)
            #expect(prettyTape.nodes.map(\.kind) == tape.nodes.map(\.kind))
            #expect(prettyTape.nodes.map(\.count) == tape.nodes.map(\.count))
            #expect(prettyTape.nodes.map(\.next) == tape.nodes.map(\.next))
        }
    }
}
