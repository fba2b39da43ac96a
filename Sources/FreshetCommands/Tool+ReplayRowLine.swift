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
        let line: String? = id.withUTF8 { id in
            row.json.withUnsafeBytes { json in
                guard isPrintableASCII(UnsafeRawBufferPointer(id), backslash: false), isPrintableASCII(json, backslash: true) else { return nil }
                let count = 4 + id.count + json.count
                return String(unsafeUninitializedCapacity: count) { out in
                    let base = UnsafeMutableRawBufferPointer(out)
                    base[0] = 0x20
                    base[1] = 0x20
                    UnsafeMutableRawBufferPointer(rebasing: base[2..<(2 + id.count)]).copyMemory(from: UnsafeRawBufferPointer(id))
                    base[2 + id.count] = 0x20
                    base[3 + id.count] = 0x20
                    UnsafeMutableRawBufferPointer(rebasing: base[(4 + id.count)...]).copyMemory(from: json)
                    return count
                }
            }
        }
        return line ?? "  \(TerminalEscaping.escaped(row.id))  \(TerminalEscaping.escapedJSON(String(decoding: row.json, as: UTF8.self)))"
    }

    /// Whether every byte is 0x20–0x7E, `\` (0x5C) only when `backslash` allows it: then no
    /// scalar of the text is one ``TerminalEscaping`` escapes (C0, DEL, C1 and the marks it
    /// lists are outside that range), and the text is printed as it is.
    private static func isPrintableASCII(_ bytes: UnsafeRawBufferPointer, backslash: Bool) -> Bool {
        for b in bytes {
            if b < 0x20 || b > 0x7E || (b == 0x5C && !backslash) { return false }
        }
        return true
    }
}
