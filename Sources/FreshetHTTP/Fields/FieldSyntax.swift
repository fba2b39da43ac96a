/// The lexical pieces shared by every field parser in this module (RFC 9110 §5.6): tokens,
/// optional whitespace, quoted strings, comma-separated lists and delta-seconds.
///
/// Internal on purpose: `CacheControl`, `LinkHeader`, `RetryAfter` and `EntityTag` all go
/// through these functions, so they agree on what a token or a list element is. All functions
/// work on UTF-8 bytes and never trap on any input.
enum FieldSyntax {
    /// Whether `byte` is a `tchar`, a character allowed in a token (RFC 9110 §5.6.2).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "A")...UInt8(ascii: "Z"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"),
             UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// Whether `text` is a non-empty `token` (RFC 9110 §5.6.2).
    static func isToken(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenByte)
    }

    /// Whether `byte` is `SP` or `HTAB`, the characters of `OWS` (RFC 9110 §5.6.3).
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    /// `text` without leading and trailing `OWS` (RFC 9110 §5.6.3).
    static func trimmingWhitespace(_ text: Substring) -> Substring {
        let utf8 = text.utf8
        guard let first = utf8.firstIndex(where: { !isWhitespace($0) }),
              let last = utf8.lastIndex(where: { !isWhitespace($0) })
        else { return text[text.endIndex...] }
        return text[first...last]
    }

    /// Splits a `#element` list at each `separator` that is outside a quoted string
    /// (RFC 9110 §5.6.1), trims `OWS` around each element and drops empty elements, as a
    /// recipient must accept `a, , b`. An unterminated quoted string runs to the end.
    static func splitList(_ text: Substring, separator: UInt8 = UInt8(ascii: ",")) -> [Substring] {
        var elements: [Substring] = []
        var start = text.startIndex
        var inQuotes = false
        var escaped = false
        let utf8 = text.utf8
        var index = utf8.startIndex
        while index < utf8.endIndex {
            let byte = utf8[index]
            if inQuotes {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inQuotes = false
                }
            } else if byte == UInt8(ascii: "\"") {
                inQuotes = true
            } else if byte == separator {
                appendTrimmed(text[start..<index], to: &elements)
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        appendTrimmed(text[start...], to: &elements)
        return elements
    }

    private static func appendTrimmed(_ element: Substring, to elements: inout [Substring]) {
        let trimmed = trimmingWhitespace(element)
        if !trimmed.isEmpty { elements.append(trimmed) }
    }

    /// Splits one `name[=argument]` element (a cache directive or a parameter) at the first `=`,
    /// trimming `OWS` around both sides. The name is lowercased (ASCII); the argument is
    /// unquoted when it is a quoted string and is `nil` when there is no `=`.
    static func nameAndArgument(_ element: Substring) -> (name: String, argument: String?) {
        guard let equals = element.utf8.firstIndex(of: UInt8(ascii: "=")) else {
            return (asciiLowercased(trimmingWhitespace(element)), nil)
        }
        let name = asciiLowercased(trimmingWhitespace(element[..<equals]))
        let rawArgument = trimmingWhitespace(element[element.utf8.index(after: equals)...])
        return (name, unquote(rawArgument))
    }

    /// The content of a `quoted-string` with its `quoted-pair`s resolved (RFC 9110 §5.6.4),
    /// or `text` unchanged when it does not start with `DQUOTE`. Tolerant: an unterminated
    /// quoted string yields everything after the opening quote.
    static func unquote(_ text: Substring) -> String {
        var bytes = text.utf8.makeIterator()
        guard bytes.next() == UInt8(ascii: "\"") else { return String(text) }
        var content: [UInt8] = []
        var escaped = false
        while let byte = bytes.next() {
            if escaped {
                content.append(byte)
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                break
            } else {
                content.append(byte)
            }
        }
        return String(decoding: content, as: UTF8.self)
    }

    /// The largest delta-seconds value a recipient keeps: 2^31 seconds (RFC 9111 §1.2.2).
    static let maximumDeltaSeconds = 2_147_483_648

    /// Parses `delta-seconds = 1*DIGIT` (RFC 9111 §1.2.2): a non-negative number of seconds,
    /// capped at 2147483648 however many digits it has. `nil` when `text` is empty or has any
    /// character other than an ASCII digit (a sign, a decimal point, whitespace).
    static func deltaSeconds(_ text: some StringProtocol) -> Int? {
        guard !text.isEmpty else { return nil }
        var value = 0
        for byte in text.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = min(value * 10 + Int(byte - UInt8(ascii: "0")), maximumDeltaSeconds)
        }
        return value
    }

    /// `text` with ASCII letters lowercased and every other byte unchanged. Field names,
    /// directive names and relation types are case-insensitive in ASCII only.
    static func asciiLowercased(_ text: some StringProtocol) -> String {
        String(decoding: text.utf8.map { byte in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
        }, as: UTF8.self)
    }

    /// Whether `lhs` and `rhs` are equal when ASCII letters are compared case-insensitively,
    /// as field names are (RFC 9110 §5.1).
    static func equalsIgnoringASCIICase(_ lhs: some StringProtocol, _ rhs: some StringProtocol) -> Bool {
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        return zip(lhs.utf8, rhs.utf8).allSatisfy { left, right in
            left == right || (left | 0x20 == right | 0x20 && (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(left | 0x20))
        }
    }
}
