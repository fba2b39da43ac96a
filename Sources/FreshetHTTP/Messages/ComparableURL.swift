import Foundation

/// A URL in the form two spellings of the same request compare equal in, for telling whether
/// a `next` page names a page already fetched (a cursor loop) however the server spelled it.
///
/// ```swift
/// ComparableURL("HTTPS://Api.test:443/p?b=2&a=%7e1&") == ComparableURL("https://api.test/p?a=~1&b=2")  // true
/// ```
///
/// The syntax-based normalization of RFC 3986 §6.2.2 and the scheme-based one of §6.2.3:
/// - scheme and host in ASCII lowercase, userinfo dropped, the scheme's default port (80 for
///   `http`, 443 for `https`, as ``Origin`` fills it in) and an empty port left out;
/// - an empty path is `/`;
/// - percent-encodings with uppercase hex digits, and those of unreserved characters
///   (`A–Z a–z 0–9 - . _ ~`, §2.3) decoded;
/// - an empty query (a trailing `?`) and empty parameters (`a=1&&b=2`, a trailing `&`) left
///   out, and the parameters sorted by name — stably, so repeated names keep their order.
///   RFC 3986 leaves the meaning of parameter order to the server; paging APIs treat the
///   query as a set of named values, and a loop spelled in another order is still a loop;
/// - the fragment dropped (it is never sent, RFC 9110 §7.1).
///
/// Dot segments (`/a/./b`) are kept as they are: a server that names its pages that way
/// is caught one page later, by the exact spelling it repeats.
public struct ComparableURL: Sendable, Hashable, CustomStringConvertible {
    /// The normalized text.
    public let description: String

    /// The comparable form of `string`, which need not parse as a URL (a stored, redacted
    /// `next` link): what is not a URL is normalized as far as it has URL parts.
    public init(_ string: String) {
        var text = Substring(string)
        if let hash = text.firstIndex(of: "#") { text = text[..<hash] }
        var result = ""
        var scheme = ""
        if let schemeEnd = text.range(of: "://") {
            scheme = FieldSyntax.asciiLowercased(text[..<schemeEnd.lowerBound])
            text = text[schemeEnd.upperBound...]
            let authorityEnd = text.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? text.endIndex
            var authority = text[..<authorityEnd]
            if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
            result = scheme + "://" + Self.hostAndPort(authority, scheme: scheme)
            text = text[authorityEnd...]
        }
        let queryStart = text.firstIndex(of: "?") ?? text.endIndex
        let path = Self.percentNormalized(text[..<queryStart])
        result += path.isEmpty && !scheme.isEmpty ? "/" : path
        if queryStart < text.endIndex {
            let parameters = text[text.index(after: queryStart)...].split(separator: "&").map(Self.percentNormalized)
            let sorted = parameters.enumerated().sorted { a, b in
                let (nameA, nameB) = (Self.name(a.element), Self.name(b.element))
                return nameA == nameB ? a.offset < b.offset : nameA < nameB
            }
            if !sorted.isEmpty { result += "?" + sorted.map(\.element).joined(separator: "&") }
        }
        description = result
    }

    /// The comparable form of `url`.
    public init(_ url: URL) {
        self.init(url.absoluteString)
    }

    private static func name(_ parameter: String) -> Substring {
        parameter.prefix { $0 != "=" }
    }

    /// `host[:port]` lowercase, without the scheme's default port or an empty one.
    private static func hostAndPort(_ authority: Substring, scheme: String) -> String {
        // An IPv6 literal holds colons of its own: the port colon comes after its `]`.
        let searchFrom = authority.lastIndex(of: "]") ?? authority.startIndex
        guard let colon = authority[searchFrom...].lastIndex(of: ":") else { return FieldSyntax.asciiLowercased(authority) }
        let host = FieldSyntax.asciiLowercased(authority[..<colon])
        let port = authority[authority.index(after: colon)...]
        let defaultPort = scheme == "http" ? "80" : scheme == "https" ? "443" : nil
        let digits = port.drop { $0 == "0" }
        if port.isEmpty || (defaultPort != nil && String(digits) == defaultPort) { return host }
        return host + ":" + (digits.isEmpty ? "0" : digits)
    }

    /// `text` with `%xx` in uppercase hex and unreserved characters decoded (RFC 3986 §6.2.2.1–2).
    private static func percentNormalized(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        let utf8 = Array(text.utf8)
        var i = 0
        while i < utf8.count {
            if utf8[i] == UInt8(ascii: "%"), i + 2 < utf8.count, let high = hexValue(utf8[i + 1]), let low = hexValue(utf8[i + 2]) {
                let byte = high << 4 | low
                if isUnreserved(byte) {
                    bytes.append(byte)
                } else {
                    bytes.append(UInt8(ascii: "%"))
                    bytes.append(hexDigit(high))
                    bytes.append(hexDigit(low))
                }
                i += 3
            } else {
                bytes.append(utf8[i])
                i += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func hexDigit(_ v: UInt8) -> UInt8 {
        v < 10 ? UInt8(ascii: "0") + v : UInt8(ascii: "A") + v - 10
    }

    private static func isUnreserved(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }
}
