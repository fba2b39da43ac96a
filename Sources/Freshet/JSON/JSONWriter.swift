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
    package mutating func escapedString(_ utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        var runStart = 0
        for (i, c) in utf8.enumerated() where c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") {
            if runStart < i { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i])) }
            runStart = i + 1
            switch c {
            case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\\")); bytes.append(c)
            case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\")); bytes.append(c)
            case 0x08: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "b"))
            case 0x09: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "t"))
            case 0x0A: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "n"))
            case 0x0C: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "f"))
            case 0x0D: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "r"))
            default:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(c >> 4)], hex[Int(c & 0xF)]])
            }
        }
        if runStart < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        bytes.append(UInt8(ascii: "\""))
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

    package mutating func bool(_ v: Bool) { bytes.append(contentsOf: v ? Array("true".utf8) : Array("false".utf8)) }
    package mutating func null() { bytes.append(contentsOf: [UInt8(ascii: "n"), UInt8(ascii: "u"), UInt8(ascii: "l"), UInt8(ascii: "l")]) }

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
