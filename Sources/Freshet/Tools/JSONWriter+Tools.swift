import Foundation

extension JSONWriter {
    /// `s` as a JSON string, or `null` when nil.
    package mutating func string(orNull s: String?) {
        if let s { string(s) } else { null() }
    }

    /// An LSN as a number, or `null` when nil.
    package mutating func lsn(orNull l: LSN?) {
        if let l { number(l.rawValue) } else { null() }
    }

    /// A time as an ISO 8601 UTC string with milliseconds (``LogRecord/iso8601(_:)``), or `null` when nil.
    package mutating func time(orNull d: Date?) {
        if let d { LogRecord.writeISO8601(d, into: &self) } else { null() }
    }

    /// A stored row's JSON, embedded as is (`null` when empty). A line break can only be
    /// insignificant white space in valid JSON (inside a string it must be escaped,
    /// RFC 8259 §7), so one becomes a space: the value stays the same and the output one line.
    package mutating func rowValue(_ json: Data) {
        guard !json.isEmpty else { null(); return }
        let start = bytes.count
        raw(json)
        for i in start..<bytes.count where bytes[i] == UInt8(ascii: "\n") || bytes[i] == UInt8(ascii: "\r") {
            bytes[i] = UInt8(ascii: " ")
        }
    }

    /// ``rowValue(_:)`` of a stored row's JSON lent as bytes (`replay --json` writes rows
    /// straight from the replayed tables).
    package mutating func rowValue(_ json: UnsafeRawBufferPointer) {
        guard !json.isEmpty else { null(); return }
        let start = bytes.count
        bytes.append(contentsOf: json)
        for i in start..<bytes.count where bytes[i] == UInt8(ascii: "\n") || bytes[i] == UInt8(ascii: "\r") {
            bytes[i] = UInt8(ascii: " ")
        }
    }

    /// The written bytes as text, then empties the buffer (keeping its capacity) for the next line.
    package mutating func takeLine() -> String {
        defer { bytes.removeAll(keepingCapacity: true) }
        return string
    }
}
