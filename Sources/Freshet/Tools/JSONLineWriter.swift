/// The one place the log tools turn a ``JSONValue`` into text: one line of JSON (RFC 8259),
/// no insignificant whitespace, strings escaped as RFC 8259 §7 requires (`"`, `\`, and control
/// characters as `\n`, `\t`, … or `\u00XX`), everything else as UTF-8. Kept small on purpose
/// so a faster canonical writer can replace it in one place.
package enum JSONLineWriter {
    package static func line(_ value: JSONValue) -> String {
        var out = ""
        write(value, to: &out)
        return out
    }

    private static func write(_ value: JSONValue, to out: inout String) {
        switch value {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .uint(let u): out += String(u)
        case .string(let s): string(s, to: &out)
        case .raw(let text): out += text
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                write(item, to: &out)
            }
            out += "]"
        case .object(let fields):
            out += "{"
            for (i, (key, item)) in fields.enumerated() {
                if i > 0 { out += "," }
                string(key, to: &out)
                out += ":"
                write(item, to: &out)
            }
            out += "}"
        }
    }

    private static func string(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
