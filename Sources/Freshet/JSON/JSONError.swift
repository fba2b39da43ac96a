/// Why a byte sequence is not JSON (RFC 8259), with the byte offset where reading stopped.
///
/// Thrown by ``JSONTape/init(parsing:maxDepth:)``; ``description`` names the problem and the
/// offset, e.g. `invalid UTF-8 at byte 17`.
package struct JSONError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Reason: Sendable, Hashable {
        /// The input ended inside a value, or holds no value.
        case unexpectedEnd
        /// A byte that cannot start or continue a value here (RFC 8259 §2).
        case unexpectedByte(UInt8)
        /// A string holds bytes that are not UTF-8 (RFC 8259 §8.1).
        case invalidUTF8
        /// A backslash escape that RFC 8259 §7 does not define, or a lone UTF-16 surrogate.
        case invalidEscape
        /// An unescaped control character (U+0000–U+001F) in a string (RFC 8259 §7).
        case controlCharacterInString
        /// A number that does not follow RFC 8259 §6 (e.g. `01`, `1.`, `-`, `1e`).
        case invalidNumber
        /// More than `maxDepth` arrays and objects nested inside each other.
        case tooDeep(maxDepth: Int)
        /// A value after the top-level value.
        case trailingContent
        /// The input is larger than the index can address (4 GiB).
        case tooLarge
    }

    package var reason: Reason
    /// The byte offset in the input where the problem was found.
    package var offset: Int

    package init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    package var description: String {
        switch reason {
        case .unexpectedEnd: "unexpected end of input at byte \(offset)"
        case .unexpectedByte(let b):
            if b >= 0x20 && b < 0x7F { "unexpected \(String(UnicodeScalar(b)).debugDescription) at byte \(offset)" }
            else { "unexpected byte 0x\(String(b, radix: 16, uppercase: true)) at byte \(offset)" }
        case .invalidUTF8: "invalid UTF-8 at byte \(offset)"
        case .invalidEscape: "invalid escape sequence at byte \(offset)"
        case .controlCharacterInString: "unescaped control character in a string at byte \(offset)"
        case .invalidNumber: "invalid number at byte \(offset)"
        case .tooDeep(let maxDepth): "arrays and objects nested deeper than \(maxDepth) at byte \(offset)"
        case .trailingContent: "content after the JSON value at byte \(offset)"
        case .tooLarge: "input larger than 4 GiB"
        }
    }
}
