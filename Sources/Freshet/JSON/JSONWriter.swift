import Foundation

/// Appends JSON text (RFC 8259) to a byte buffer: the one writer behind stored rows
/// (``JSONWriter/canonicalRow(_:in:)``), `freshet dump --json` and export.
///
/// Output is minified UTF-8. Strings are escaped as JSONSerialization does with
/// `.withoutEscapingSlashes`: `"` and `\` get a backslash, U+0008/0009/000A/000C/000D their short
/// escapes, other control characters `\u00XX` (lowercase hex); everything else is written as
/// UTF-8, `/` included.
///
/// ```swift
/// var w = JSONWriter()
/// w.object { o in
///     o.field("id") { $0.string("25") }
///     o.field("lsn") { $0.number(7) }
/// }
/// // w.bytes == Array(#"{"id":"25","lsn":7}"#.utf8)
/// ```
package struct JSONWriter: Sendable {
    package var bytes: [UInt8]

    package init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// The text written so far.
    package var string: String { String(decoding: bytes, as: UTF8.self) }

    /// A JSON string holding `s`, quoted and escaped.
    package mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { escapedString($0) }
    }

    /// A JSON string holding the UTF-8 text `utf8`, quoted and escaped.
    ///
    /// Eight bytes are tested at a time (``escapeMask(_:)``): IDs, names and summaries
    /// rarely hold a byte to escape, and testing byte by byte was 14% of `dump --json`
    /// (docs/performance.md, issue 8 speed round 9, dump).
    package mutating func escapedString(_ utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        guard let base = utf8.baseAddress else {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        let count = utf8.count
        var runStart = 0
        var i = 0
        while i < count {
            if i + 8 <= count {
                // Skip to the first byte to escape in the next eight (the mask's lowest flag
                // is exact), or past all eight.
                let mask = Self.escapeMask(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                guard mask != 0 else {
                    i += 8
                    continue
                }
                i += mask.trailingZeroBitCount / 8
            }
            let c = base[i]
            guard c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") else {
                i += 1
                continue
            }
            if runStart < i { bytes.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: i - runStart)) }
            i += 1
            runStart = i
            bytes.append(UInt8(ascii: "\\"))
            switch c {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(c)
            case 0x08: bytes.append(UInt8(ascii: "b"))
            case 0x09: bytes.append(UInt8(ascii: "t"))
            case 0x0A: bytes.append(UInt8(ascii: "n"))
            case 0x0C: bytes.append(UInt8(ascii: "f"))
            case 0x0D: bytes.append(UInt8(ascii: "r"))
            default:
                bytes.append(UInt8(ascii: "u")); bytes.append(UInt8(ascii: "0")); bytes.append(UInt8(ascii: "0"))
                bytes.append(Self.hexDigit(c >> 4)); bytes.append(Self.hexDigit(c & 0xF))
            }
        }
        if runStart < count { bytes.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: count - runStart)) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The high bit of each byte of `word` (little-endian: byte 0 is the lowest) that may need
    /// escaping: a control byte (below 0x20), `"` or `\\`. The "has a zero byte" and "has a
    /// byte below n" tests: no such byte is missed, and the lowest flag is always a byte that
    /// needs escaping (a borrow that flags a byte wrongly starts at a lower flagged byte), so
    /// the loop jumps straight to it; flags above it are looked at again.
    @inline(__always)
    static func escapeMask(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let below0x20 = (word &- ones &* 0x20) & ~word
        return (below0x20 | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)) & highs
    }

    /// The lowercase hex digit of `nibble` (0–15).
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// An integer in decimal.
    package mutating func number(_ v: some BinaryInteger) {
        if v < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = UInt64(v.magnitude)
        let start = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        bytes[start...].reverse()
    }

    /// A finite double in Swift's shortest round-tripping form (`1.5`, `1e+100`); integral
    /// values within ±2^53 without a fraction (`3`). Not finite: `null` (JSON has no NaN).
    package mutating func number(_ v: Double) {
        guard v.isFinite else { null(); return }
        if v == v.rounded(), abs(v) < 9_007_199_254_740_992 {
            number(Int64(v))
        } else {
            bytes.append(contentsOf: v.description.utf8)
        }
    }

    package mutating func bool(_ v: Bool) { ascii(v ? "true" : "false") }
    package mutating func null() { ascii("null") }

    /// Appends the ASCII text of a literal without escaping it (no array made per call).
    package mutating func ascii(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Bytes that already are one JSON value (a stored row), copied as they are.
    package mutating func raw(_ json: some Sequence<UInt8>) { bytes.append(contentsOf: json) }

    /// An object whose fields `body` writes, in the order it writes them.
    package mutating func object(_ body: (inout ObjectWriter) -> Void) {
        var o = ObjectWriter(writer: self)
        bytes = []
        o.writer.bytes.append(UInt8(ascii: "{"))
        body(&o)
        o.writer.bytes.append(UInt8(ascii: "}"))
        self = o.writer
    }

    /// An array whose elements `body` writes (each call of `element` is one element).
    package mutating func array(_ body: (inout ArrayWriter) -> Void) {
        var a = ArrayWriter(writer: self)
        bytes = []
        a.writer.bytes.append(UInt8(ascii: "["))
        body(&a)
        a.writer.bytes.append(UInt8(ascii: "]"))
        self = a.writer
    }

    /// An array of strings.
    package mutating func array(strings: [String]) {
        array { a in for s in strings { a.element { $0.string(s) } } }
    }

    /// Writes the fields of one object: keys are escaped; the caller picks the order.
    package struct ObjectWriter {
        fileprivate var writer: JSONWriter
        private var first = true

        fileprivate init(writer: JSONWriter) { self.writer = writer }

        package mutating func field(_ key: String, _ value: (inout JSONWriter) -> Void) {
            if !first { writer.bytes.append(UInt8(ascii: ",")) }
            first = false
            writer.string(key)
            writer.bytes.append(UInt8(ascii: ":"))
            value(&writer)
        }
        package mutating func field(_ key: String, string v: String) { field(key) { $0.string(v) } }
        package mutating func field(_ key: String, string v: String?) { if let v { field(key) { $0.string(v) } } }
        package mutating func field(_ key: String, number v: some BinaryInteger) { field(key) { $0.number(v) } }
        package mutating func field(_ key: String, bool v: Bool) { field(key) { $0.bool(v) } }
    }

    /// Writes the elements of one array.
    package struct ArrayWriter {
        fileprivate var writer: JSONWriter
        private var first = true

        fileprivate init(writer: JSONWriter) { self.writer = writer }

        package mutating func element(_ value: (inout JSONWriter) -> Void) {
            if !first { writer.bytes.append(UInt8(ascii: ",")) }
            first = false
            value(&writer)
        }
    }
}
