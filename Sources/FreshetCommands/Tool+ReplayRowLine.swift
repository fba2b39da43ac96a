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
        guard isPrintableASCII(id, backslash: false), isPrintableASCII(json, backslash: true) else {
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

    /// Whether every byte is 0x20–0x7E, `\` (0x5C) only when `backslash` allows it: then no
    /// scalar of the text is one ``TerminalEscaping`` escapes (C0, DEL, C1 and the marks it
    /// lists are outside that range), and the text is printed as it is.
    ///
    /// Eight bytes at a time (issue 8's speed round 7): for a word `x` of eight bytes, a byte
    /// below 0x20 sets its high bit in `(x − 0x20…20) & ~x`, a byte above 0x7E in
    /// `(x + 0x01…01) | x`, a `\` in `(y − 0x01…01) & ~y` with `y = x ^ 0x5C…5C` (a zero byte of
    /// `y`); the words are exact as a whole (a borrow or carry only ever starts at a byte that
    /// is itself outside the range). A tail of 1–7 bytes is padded with spaces to a word.
    /// Until then the check went byte by byte.
    static func isPrintableASCII(_ bytes: UnsafeRawBufferPointer, backslash: Bool) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always)
        func outside(_ x: UInt64) -> UInt64 {
            var bad = ((x &- 0x20 &* ones) & ~x) | ((x &+ ones) | x)
            if !backslash {
                let y = x ^ (0x5C &* ones)
                bad |= (y &- ones) & ~y
            }
            return bad & highs
        }
        var i = 0
        var bad: UInt64 = 0
        while i + 8 <= bytes.count {
            bad |= outside(bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            i += 8
        }
        if i < bytes.count {
            var tail: UInt64 = 0x20 &* ones
            withUnsafeMutableBytes(of: &tail) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[i...])) }
            bad |= outside(tail)
        }
        return bad == 0
    }
}
