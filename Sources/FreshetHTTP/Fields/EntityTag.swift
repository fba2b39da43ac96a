/// An entity tag, the `ETag` validator (RFC 9110 §8.8.3): an opaque string, strong or weak.
///
/// ```swift
/// let stored = EntityTag(parsing: #"W/"v7""#)       // weak, opaque tag "v7"
/// let current = EntityTag(parsing: #""v7""#)        // strong, opaque tag "v7"
/// stored?.weakCompare(current!)   // true
/// stored?.strongCompare(current!) // false: a weak tag never matches strongly
/// ```
///
/// The ``description`` is the field form (`"v7"` or `W/"v7"`), ready for `If-None-Match`.
/// A store can also just echo the received `ETag` value; parsing is for comparing.
public struct EntityTag: Sendable, Hashable, CustomStringConvertible {
    /// The tag between the quotes, without them: `v7` for `W/"v7"`.
    public let opaqueTag: String
    /// Whether the tag is weak (`W/` prefix): equal weak tags only promise semantically
    /// equivalent content, not identical bytes (RFC 9110 §8.8.1).
    public let isWeak: Bool

    /// A tag with `opaqueTag` (without quotes).
    ///
    /// Precondition (programmer error): `opaqueTag` contains only `etagc` characters (RFC 9110
    /// §8.8.3): no `"`, no space, no control characters.
    public init(opaqueTag: String, isWeak: Bool = false) {
        precondition(opaqueTag.utf8.allSatisfy(Self.isETagCharacter), "EntityTag opaque tags cannot contain DQUOTE, spaces or controls (RFC 9110 §8.8.3), got \(opaqueTag.debugDescription)")
        self.opaqueTag = opaqueTag
        self.isWeak = isWeak
    }

    /// Parses one `entity-tag = [ weak ] opaque-tag` (RFC 9110 §8.8.3), e.g. `"xyzzy"` or
    /// `W/"xyzzy"`, ignoring surrounding spaces and tabs.
    ///
    /// `W/` is case-sensitive (`%s"W/"`); `w/"x"` is rejected. Returns `nil` for an unquoted
    /// value (`xyzzy`), a missing closing quote, characters after it, or a character that is
    /// not allowed inside (`"`, space, control characters).
    public init?(parsing fieldValue: String) {
        var bytes = Substring(FieldSyntax.trimmingWhitespace(fieldValue[...])).utf8[...]
        let weak = bytes.starts(with: "W/".utf8)
        if weak { bytes = bytes.dropFirst(2) }
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else { return nil }
        let inner = bytes.dropFirst().dropLast()
        guard inner.allSatisfy(Self.isETagCharacter) else { return nil }
        opaqueTag = String(decoding: inner, as: UTF8.self)
        isWeak = weak
    }

    /// `"tag"` or `W/"tag"`: the field form.
    public var description: String {
        isWeak ? "W/\"\(opaqueTag)\"" : "\"\(opaqueTag)\""
    }

    /// Strong comparison (RFC 9110 §8.8.3.2): both tags are strong and their opaque tags are
    /// identical, character by character. Used for `If-Match` and ranges.
    public func strongCompare(_ other: EntityTag) -> Bool {
        !isWeak && !other.isWeak && opaqueTag.utf8.elementsEqual(other.opaqueTag.utf8)
    }

    /// Weak comparison (RFC 9110 §8.8.3.2): the opaque tags are identical, whether either is
    /// weak or not. Used for `If-None-Match`, so for revalidation.
    public func weakCompare(_ other: EntityTag) -> Bool {
        opaqueTag.utf8.elementsEqual(other.opaqueTag.utf8)
    }

    /// `etagc = %x21 / %x23-7E / obs-text` (RFC 9110 §8.8.3).
    private static func isETagCharacter(_ byte: UInt8) -> Bool {
        byte == 0x21 || (0x23...0x7E).contains(byte) || byte >= 0x80
    }
}
