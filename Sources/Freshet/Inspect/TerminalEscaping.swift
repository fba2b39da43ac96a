/// Makes text that came from a server or from a log file safe to print as part of one line
/// on a terminal, as `freshet dump` does with collection names, row IDs, reasons, paths and
/// every other string a server could choose.
///
/// ```swift
/// TerminalEscaping.escaped("todo\u{1B}[31m\n2")   // todo\u{1B}[31m\n2  (one line, no colour)
/// ```
public enum TerminalEscaping {
    /// `text` with every character that could end the line, move the cursor or drive the
    /// terminal written as a Swift-style escape, so one record stays one line and the text
    /// shown is the text stored:
    /// - `\n`, `\r`, `\t` and `\0` by name; other C0 controls U+0000–U+001F (ESC is
    ///   `\u{1B}`, BEL `\u{7}`), DEL U+007F and the C1 controls U+0080–U+009F (U+009B is the
    ///   8-bit CSI) as `\u{X}` with the scalar in uppercase hex;
    /// - U+2028 and U+2029 (line and paragraph separators), and the bidirectional marks,
    ///   embeddings, overrides and isolates U+061C, U+200E, U+200F, U+202A–U+202E and
    ///   U+2066–U+2069 that reorder what a reader sees ("Trojan Source", CVE-2021-42574);
    /// - `\` itself as `\\`, so an escape in the output always means an escaped character.
    ///
    /// Every other character, ASCII or not (`é`, `→`, `…`), is kept. Text with nothing to
    /// escape is returned as it is.
    public static func escaped(_ text: String) -> String {
        // Printable ASCII without `\` (most IDs, names and summaries) is tested eight bytes at
        // a time; only other text is looked at scalar by scalar.
        var text = text
        if text.withUTF8({ isPrintableASCII(UnsafeRawBufferPointer($0), backslash: false) }) { return text }
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\0": result += "\\0"
            default: result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return result
    }

    /// JSON text (a row value) made safe the same way while staying JSON: every character
    /// ``escaped(_:)`` would escape, except `\` (JSON escapes it itself), is written as a JSON
    /// `\uXXXX` escape (RFC 8259 §7), so `{"t":"a\"b"}` prints as it is stored and a raw
    /// U+202E prints as `\u202E`.
    public static func escapedJSON(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 != "\\" && needsEscape($0) }) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            if scalar != "\\", needsEscape(scalar) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x5C, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069: true
        default: false
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
    package static func isPrintableASCII(_ bytes: UnsafeRawBufferPointer, backslash: Bool) -> Bool {
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
