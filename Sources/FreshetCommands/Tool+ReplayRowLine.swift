import Foundation
import Freshet

extension Tool {
    /// A row's line in `replay`'s text output: two spaces, the ID (``TerminalEscaping/escaped(_:)``),
    /// two spaces, the JSON (``TerminalEscaping/escapedJSON(_:)``).
    ///
    /// A row whose ID and JSON are printable ASCII (bytes 0x20–0x7E; a `\` only in the JSON,
    /// which keeps its own escapes) has nothing to escape: its line is copied from the bytes into
    /// one string. Any other row takes the escaping functions, which look at every Unicode scalar.
    /// Before issue 8's speed round 5 every row did, and built the line from three strings and
    /// an interpolation: ~6,500 instructions a row, 0.9 billion for W5's 135,100 rows
    /// (docs/performance.md, W5).
    static func rowLine(_ row: Row) -> String {
        var id = row.id
        return id.withUTF8 { id in row.json.withUnsafeBytes { json in rowLine(id: UnsafeRawBufferPointer(id), json: json) } }
    }

    /// ``rowLine(_:)`` of the row whose ID's UTF-8 is `id` and whose JSON is `json`: what
    /// `replay` prints for a row lent from the replayed tables (``LentReplay``), with no `Row` made.
    static func rowLine(id: UnsafeRawBufferPointer, json: UnsafeRawBufferPointer) -> String {
        guard TerminalEscaping.isPrintableASCII(id, backslash: false), TerminalEscaping.isPrintableASCII(json, backslash: true) else {
            return "  \(TerminalEscaping.escaped(String(decoding: id, as: UTF8.self)))  \(TerminalEscaping.escapedJSON(String(decoding: json, as: UTF8.self)))"
        }
        let count = 4 + id.count + json.count
        return String(unsafeUninitializedCapacity: count) { out in
            let base = UnsafeMutableRawBufferPointer(out)
            base[0] = 0x20
            base[1] = 0x20
            UnsafeMutableRawBufferPointer(rebasing: base[2..<(2 + id.count)]).copyMemory(from: id)
            base[2 + id.count] = 0x20
            base[3 + id.count] = 0x20
            UnsafeMutableRawBufferPointer(rebasing: base[(4 + id.count)...]).copyMemory(from: json)
            return count
        }
    }
}
