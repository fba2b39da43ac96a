/// An HTTP request method (RFC 9110 §9), such as `GET` or `POST`.
///
/// ```swift
/// let method: HTTPMethod = .patch
/// method.rawValue // "PATCH"
/// ```
///
/// Methods are case-sensitive (RFC 9110 §9.1): `"get"` is a different, unregistered method.
/// Any token may be used; a raw value that is not a `token` (RFC 9110 §5.6.2) — empty, or
/// containing whitespace or separators — is a programmer error and stops the program.
public struct HTTPMethod: RawRepresentable, Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The method name as sent on the wire, e.g. `"GET"`.
    public let rawValue: String

    /// A method named `rawValue`. Precondition: `rawValue` is a non-empty token.
    public init(rawValue: String) {
        precondition(FieldSyntax.isToken(rawValue), "HTTPMethod needs a token (RFC 9110 §9.1), got \(rawValue.debugDescription)")
        self.rawValue = rawValue
    }

    /// A method named by a string literal, e.g. `let purge: HTTPMethod = "PURGE"`.
    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }

    /// The method name, e.g. `"GET"`.
    public var description: String { rawValue }

    /// `GET`: transfer a current representation (RFC 9110 §9.3.1). Safe and idempotent.
    public static let get = HTTPMethod(rawValue: "GET")
    /// `HEAD`: like `GET` without the content (RFC 9110 §9.3.2). Safe and idempotent.
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `POST`: resource-specific processing of the content (RFC 9110 §9.3.3). Not idempotent.
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`: replace the target's state with the content (RFC 9110 §9.3.4). Idempotent.
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `PATCH`: apply partial modifications (RFC 5789 §2). Not idempotent.
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `DELETE`: remove the association with the target (RFC 9110 §9.3.5). Idempotent.
    public static let delete = HTTPMethod(rawValue: "DELETE")
}
