import Foundation

/// The links of a `Link` field (RFC 8288 §3), as GitHub-style APIs use for pagination.
///
/// ```swift
/// let links = LinkHeader(
///     parsing: #"<https://api.github.com/repos?page=3>; rel="next", </repos?page=50>; rel="last""#,
///     baseURL: URL(string: "https://api.github.com/repos?page=2")
/// )
/// links.url(rel: "next") // https://api.github.com/repos?page=3
/// links.url(rel: "last") // https://api.github.com/repos?page=50 (resolved against baseURL)
/// ```
///
/// Shape: ``links`` holds one ``Link`` per link-value, in field order. Parsing follows the
/// algorithm of RFC 8288 Appendix B.2–B.4 and is tolerant: whitespace is ignored around
/// `;`, `,` and `=`, parameter names are case-insensitive, values may be tokens or quoted
/// strings, a link-value that does not start with `<` is skipped up to the next `,` outside
/// quotes, and an unterminated `<` ends parsing. Links whose target cannot be made into a
/// `URL` are dropped. Extended parameters (`title*`) are kept raw, not RFC 8187-decoded.
public struct LinkHeader: Sendable, Hashable {
    /// One link-value: a target, its relation types and its other target attributes.
    public struct Link: Sendable, Hashable {
        /// The target, resolved against the base URL (RFC 8288 §3.1, RFC 3986 §5).
        public var url: URL
        /// The relation types of the first `rel` parameter, split at whitespace and lowercased
        /// (`rel="next last"` gives `["next", "last"]`); later `rel` parameters are ignored
        /// (RFC 8288 §3.3). Empty when the link has no `rel`.
        public var rel: [String]
        /// Every other parameter by lowercased name, with its unquoted value, or `""` when it
        /// had none (e.g. `["type": "text/html", "anchor": "#x"]`). The first occurrence of a
        /// name wins.
        public var parameters: [String: String]

        /// A link to `url` with the given relation types and parameters.
        public init(url: URL, rel: [String], parameters: [String: String] = [:]) {
            self.url = url
            self.rel = rel
            self.parameters = parameters
        }
    }

    /// The links, in the order they appear in the field.
    public var links: [Link]

    /// A `Link` field holding `links`.
    public init(links: [Link]) {
        self.links = links
    }

    /// Parses one `Link` field value (or several joined with commas).
    ///
    /// - Parameters:
    ///   - fieldValue: the field value.
    ///   - baseURL: the URL relative targets are resolved against; use the response's final
    ///     URL (``HTTPResponse/url``). When `nil`, relative targets stay relative URLs.
    public init(parsing fieldValue: String, baseURL: URL?) {
        links = Self.parse(Array(fieldValue.utf8), baseURL: baseURL)
    }

    /// Parses every `Link` line of `headers` as one list (RFC 9110 §5.3), resolving against
    /// `baseURL`; no links when there is none.
    public init(headers: HTTPHeaders, baseURL: URL?) {
        self.init(parsing: headers.combinedValue(for: "Link") ?? "", baseURL: baseURL)
    }

    /// The target of the first link whose relation types include `rel` (compared
    /// case-insensitively, RFC 8288 §2.1.1 and §2.1.2), or `nil`.
    public func url(rel: String) -> URL? {
        let wanted = FieldSyntax.asciiLowercased(rel)
        return links.first { $0.rel.contains(wanted) }?.url
    }

    // MARK: - Parsing (RFC 8288 Appendix B)

    private static func parse(_ bytes: [UInt8], baseURL: URL?) -> [Link] {
        var links: [Link] = []
        var index = 0
        while index < bytes.count {
            skip(whitespaceOrCommasIn: bytes, at: &index)
            guard index < bytes.count else { break }
            guard bytes[index] == UInt8(ascii: "<") else {
                skipToNextLinkValue(bytes, at: &index)
                continue
            }
            index += 1
            guard let close = bytes[index...].firstIndex(of: UInt8(ascii: ">")) else { break }
            let target = String(decoding: bytes[index..<close], as: UTF8.self)
            index = close + 1
            let parameters = parseParameters(bytes, at: &index)
            skipToNextLinkValue(bytes, at: &index)
            if let link = makeLink(target: target, parameters: parameters, baseURL: baseURL) {
                links.append(link)
            }
        }
        return links
    }

    /// `*( OWS ";" OWS link-param )`, `link-param = token BWS [ "=" BWS ( token / quoted-string ) ]`.
    private static func parseParameters(_ bytes: [UInt8], at index: inout Int) -> [(name: String, value: String)] {
        var parameters: [(name: String, value: String)] = []
        while true {
            skip(whitespaceIn: bytes, at: &index)
            guard index < bytes.count, bytes[index] == UInt8(ascii: ";") else { return parameters }
            index += 1
            skip(whitespaceIn: bytes, at: &index)
            let nameStart = index
            while index < bytes.count, ![UInt8(ascii: "="), UInt8(ascii: ";"), UInt8(ascii: ",")].contains(bytes[index]) {
                index += 1
            }
            let name = FieldSyntax.asciiLowercased(FieldSyntax.trimmingWhitespace(String(decoding: bytes[nameStart..<index], as: UTF8.self)[...]))
            var value = ""
            if index < bytes.count, bytes[index] == UInt8(ascii: "=") {
                index += 1
                skip(whitespaceIn: bytes, at: &index)
                value = index < bytes.count && bytes[index] == UInt8(ascii: "\"")
                    ? parseQuotedString(bytes, at: &index)
                    : parseUnquotedValue(bytes, at: &index)
            }
            if !name.isEmpty { parameters.append((name, value)) }
        }
    }

    /// A quoted string starting at `index` (on the opening quote), unescaped; stops after the
    /// closing quote or at the end (RFC 8288 Appendix B.4).
    private static func parseQuotedString(_ bytes: [UInt8], at index: inout Int) -> String {
        var content: [UInt8] = []
        index += 1
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\\"), index < bytes.count {
                content.append(bytes[index])
                index += 1
            } else if byte == UInt8(ascii: "\"") {
                break
            } else {
                content.append(byte)
            }
        }
        return String(decoding: content, as: UTF8.self)
    }

    /// A token value: everything up to `;` or `,`, without trailing whitespace.
    private static func parseUnquotedValue(_ bytes: [UInt8], at index: inout Int) -> String {
        let start = index
        while index < bytes.count, bytes[index] != UInt8(ascii: ";"), bytes[index] != UInt8(ascii: ",") {
            index += 1
        }
        return String(FieldSyntax.trimmingWhitespace(String(decoding: bytes[start..<index], as: UTF8.self)[...]))
    }

    private static func skip(whitespaceIn bytes: [UInt8], at index: inout Int) {
        while index < bytes.count, FieldSyntax.isWhitespace(bytes[index]) { index += 1 }
    }

    private static func skip(whitespaceOrCommasIn bytes: [UInt8], at index: inout Int) {
        while index < bytes.count, FieldSyntax.isWhitespace(bytes[index]) || bytes[index] == UInt8(ascii: ",") {
            index += 1
        }
    }

    /// Moves past the next `,` that is outside a quoted string, or to the end.
    private static func skipToNextLinkValue(_ bytes: [UInt8], at index: inout Int) {
        var inQuotes = false
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if inQuotes {
                if byte == UInt8(ascii: "\\") {
                    index += 1
                } else if byte == UInt8(ascii: "\"") {
                    inQuotes = false
                }
            } else if byte == UInt8(ascii: "\"") {
                inQuotes = true
            } else if byte == UInt8(ascii: ",") {
                return
            }
        }
    }

    private static func makeLink(target: String, parameters: [(name: String, value: String)], baseURL: URL?) -> Link? {
        let trimmedTarget = String(FieldSyntax.trimmingWhitespace(target[...]))
        let url: URL?
        if trimmedTarget.isEmpty {
            url = baseURL
        } else if let baseURL {
            url = URL(string: trimmedTarget, relativeTo: baseURL)?.absoluteURL
        } else {
            url = URL(string: trimmedTarget)
        }
        guard let url else { return nil }
        var rel: [String] = []
        var others: [String: String] = [:]
        var sawRel = false
        for (name, value) in parameters {
            if name == "rel" {
                guard !sawRel else { continue }
                sawRel = true
                rel = value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
                    .map { FieldSyntax.asciiLowercased($0) }
            } else if others[name] == nil {
                others[name] = value
            }
        }
        return Link(url: url, rel: rel, parameters: others)
    }
}
