import Foundation

/// A JSON value as the tools write it. Objects keep their keys in the order given;
/// ``raw(_:)`` embeds text that is already JSON (a stored row) without re-parsing it.
package enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])
    /// Text that is already one JSON value; written as is.
    case raw(String)

    package static func == (a: JSONValue, b: JSONValue) -> Bool {
        JSONLineWriter.line(a) == JSONLineWriter.line(b)
    }

    /// `string(s)` for a value, `null` for nil.
    package static func optional(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
}

extension JSONValue {
    /// A stored row's JSON, embedded as is. Line breaks can only be insignificant whitespace
    /// in valid JSON (inside strings they must be escaped), so they become spaces: the value
    /// stays the same and the output stays one line.
    package static func rowJSON(_ data: Data) -> JSONValue {
        if data.isEmpty { return .null }
        var text = String(decoding: data, as: UTF8.self)
        if text.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) {
            text = String(text.map { $0 == "\n" || $0 == "\r" || $0 == "\r\n" ? " " : $0 })
        }
        return .raw(text)
    }
}
