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
}
