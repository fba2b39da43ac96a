import Foundation
@testable import FreshetCommands
import Freshet
import Testing

/// `replay`'s row lines (issue 8's speed round 5): a row of printable ASCII is copied from its
/// bytes, any other row escaped as before, and both give the line the escaping functions give.
@Suite("replay's row lines")
struct ReplayRowLineTests {
    /// The line as it was built before the copy from the bytes.
    static func escapedLine(_ row: Row) -> String {
        "  \(TerminalEscaping.escaped(row.id))  \(TerminalEscaping.escapedJSON(String(decoding: row.json, as: UTF8.self)))"
    }

    @Test("printable ASCII is copied as it is, a backslash in the JSON kept, from a slice too")
    func plainRows() {
        let pikachu = Row(id: "pikachu", json: Data(#"{"name":"pikachu","url":"/api/v2/pokemon/25/"}"#.utf8))
        #expect(Tool.rowLine(pikachu) == #"  pikachu  {"name":"pikachu","url":"/api/v2/pokemon/25/"}"#)
        let quoted = Row(id: "q", json: Data(#"{"t":"a\"b\\c"}"#.utf8))
        #expect(Tool.rowLine(quoted) == #"  q  {"t":"a\"b\\c"}"#)
        let padded = Data(#"xx{"a":1}"#.utf8)
        let slice = Row(id: "s", json: padded[2...])
        #expect(slice.json.startIndex == 2)
        #expect(Tool.rowLine(slice) == #"  s  {"a":1}"#)
        #expect(Tool.rowLine(Row(id: "", json: Data())) == "    ")
    }

    @Test("controls, DEL, a backslash in the ID, bidi marks and non-ASCII text go through the escaping functions",
          arguments: [
            (Row(id: "a\u{1B}b", json: Data("{\"t\":\"\u{202E}\"}".utf8)), "  a\\u{1B}b  {\"t\":\"\\u202E\"}"),
            (Row(id: "del", json: Data("{\"t\":\"\u{7F}\"}".utf8)), "  del  {\"t\":\"\\u007F\"}"),
            (Row(id: "back\\slash", json: Data("{}".utf8)), "  back\\\\slash  {}"),
            (Row(id: "café", json: Data("{\"n\":\"é\"}".utf8)), "  café  {\"n\":\"é\"}"),
            (Row(id: "tab\there", json: Data("{\"n\":\"line\nbreak\"}".utf8)), "  tab\\there  {\"n\":\"line\\u000Abreak\"}"),
          ])
    func escapedRows(row: Row, line: String) {
        #expect(Tool.rowLine(row) == line)
        #expect(Self.escapedLine(row) == line)
    }

    /// The printable check one byte at a time, as it was before the eight-byte words.
    static func printableByBytes(_ bytes: [UInt8], backslash: Bool) -> Bool {
        bytes.allSatisfy { $0 >= 0x20 && $0 <= 0x7E && (backslash || $0 != 0x5C) }
    }

    static func printable(_ bytes: [UInt8], backslash: Bool) -> Bool {
        bytes.withUnsafeBytes { TerminalEscaping.isPrintableASCII($0, backslash: backslash) }
    }

    @Test("the edges of the printable range, in a word and in tails of 1 to 7 bytes, at every position")
    func printableEdges() {
        let edges: [(byte: UInt8, printable: Bool)] = [(0x00, false), (0x1F, false), (0x20, true), (0x21, true), (0x5B, true), (0x5D, true),
                                                       (0x7E, true), (0x7F, false), (0x80, false), (0x9F, false), (0xA0, false), (0xFF, false)]
        for count in 1...17 {
            for position in 0..<count {
                for (byte, printable) in edges {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: count)
                    bytes[position] = byte
                    #expect(Self.printable(bytes, backslash: true) == printable, "\(count) bytes, 0x\(String(byte, radix: 16)) at \(position)")
                    #expect(Self.printable(bytes, backslash: false) == printable, "\(count) bytes, 0x\(String(byte, radix: 16)) at \(position)")
                }
                var slash = [UInt8](repeating: UInt8(ascii: "~"), count: count)
                slash[position] = 0x5C
                #expect(Self.printable(slash, backslash: true))
                #expect(!Self.printable(slash, backslash: false), "\(count) bytes, \\ at \(position)")
            }
        }
        #expect(Self.printable([], backslash: false))
        // Neighbours that borrow or carry: a bad byte next to the edges on either side.
        #expect(!Self.printable([0x20, 0x1F, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20], backslash: true))
        #expect(!Self.printable([0x7E, 0x7F, 0x7E, 0x7E, 0x7E, 0x7E, 0x7E, 0x7E, 0x7E], backslash: true))
        #expect(!Self.printable([0xFF, 0x7E, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20], backslash: true))
        #expect(!Self.printable([0x00, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x5C], backslash: false))
        #expect(Self.printable([0x20, 0x7E, 0x20, 0x7E, 0x5B, 0x5D, 0x20, 0x7E, 0x5C], backslash: true))
    }

    @Test("every byte value at every position of 1 to 17 bytes agrees with the check byte by byte, both ways")
    func printableEveryByte() {
        var bytes = [UInt8](repeating: 0x41, count: 17)
        for count in 1...17 {
            for position in 0..<count {
                for value in 0...255 {
                    bytes[position] = UInt8(value)
                    let part = Array(bytes[0..<count])
                    for backslash in [false, true] where Self.printable(part, backslash: backslash) != Self.printableByBytes(part, backslash: backslash) {
                        Issue.record("\(count) bytes, 0x\(String(value, radix: 16)) at \(position), backslash \(backslash)")
                    }
                }
                bytes[position] = 0x41
            }
        }
        // Two bad bytes together, in one word and across two.
        for first in [UInt8(0x1F), 0x7F, 0x80, 0x5C] {
            for second in [UInt8(0x1F), 0x7F, 0x80, 0x5C, 0x20] {
                for gap in 1...9 {
                    var pair = [UInt8](repeating: 0x20, count: 12)
                    pair[0] = first
                    pair[min(gap, 11)] = second
                    for backslash in [false, true] {
                        #expect(Self.printable(pair, backslash: backslash) == Self.printableByBytes(pair, backslash: backslash))
                    }
                }
            }
        }
    }

    @Test("a row's line from its bytes is the line of the Row")
    func lineFromBytes() {
        let rows = [Row(id: "pikachu", json: Data(#"{"name":"pikachu"}"#.utf8)), Row(id: "a\u{1B}b", json: Data("{}".utf8)),
                    Row(id: "café", json: Data("{\"n\":\"é\"}".utf8)), Row(id: "", json: Data()), Row(id: "back\\slash", json: Data(#"{"a":"\\"}"#.utf8))]
        for row in rows {
            var id = row.id
            let line = id.withUTF8 { id in row.json.withUnsafeBytes { Tool.rowLine(id: UnsafeRawBufferPointer(id), json: $0) } }
            #expect(line == Self.escapedLine(row))
            #expect(line == Tool.rowLine(row))
        }
    }
}
