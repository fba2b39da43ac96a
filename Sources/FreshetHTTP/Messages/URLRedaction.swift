import Foundation

/// Removes credentials from a URL before it is stored or printed: userinfo
/// (`https://user:pass@host/`) is dropped, and the values of query parameters with a secret
/// name are replaced by `REDACTED`.
///
/// ```swift
/// let redaction = URLRedaction()   // the default names
/// redaction.string(for: URL(string: "https://u:p@api.example.com/items?access_token=abc&page=2")!)
/// // "https://api.example.com/items?access_token=REDACTED&page=2"
/// ```
///
/// Parameters are separated by `&` or `;`; those in the fragment (`#access_token=…`, as
/// OAuth's implicit flow returns them) are redacted the same way. Everything else stays byte
/// for byte as it was (percent-encoding, parameter order, other parameters), so two requests that differ only in a secret give the same
/// string. Names are compared after percent-decoding, ignoring ASCII case. Userinfo is never
/// kept because RFC 9110 §4.2.4 deprecates it and a stored copy would be a plain-text
/// password; the secret names are those OAuth 2.0 (RFC 6750 §2.3 `access_token`), common API
/// keys and signed URLs (`signature`, `sig`) use.
public struct URLRedaction: Sendable, Hashable {
    /// The query parameter names whose values are replaced, lowercase.
    public let secretParameterNames: Set<String>

    /// What replaces a secret value.
    public static let placeholder = "REDACTED"

    /// The default secret names: `access_token`, `token`, `api_key`, `apikey`, `key`,
    /// `signature`, `sig`.
    public static let defaultSecretParameterNames: Set<String> = ["access_token", "token", "api_key", "apikey", "key", "signature", "sig"]

    /// A redaction of the given parameter names (compared ignoring ASCII case).
    public init(secretParameterNames: Set<String> = URLRedaction.defaultSecretParameterNames) {
        self.secretParameterNames = Set(secretParameterNames.map(FieldSyntax.asciiLowercased))
    }

    /// `url` without userinfo and with secret query values replaced by ``placeholder``.
    public func string(for url: URL) -> String {
        redact(url.absoluteString)
    }

    /// The same for a URL given as a string (such as a stored `next` link). A string that is
    /// not a URL is still cleaned: userinfo before the first `/` after `://` is removed and
    /// the query (from the first `?`) is redacted.
    public func redact(_ string: String) -> String {
        var text = Substring(string)
        var result = ""
        // Scheme and authority: drop "userinfo@" from the authority.
        if let schemeEnd = text.range(of: "://") {
            result += text[..<schemeEnd.upperBound]
            text = text[schemeEnd.upperBound...]
            let authorityEnd = text.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? text.endIndex
            let authority = text[..<authorityEnd]
            if let at = authority.lastIndex(of: "@") {
                result += authority[authority.index(after: at)...]
            } else {
                result += authority
            }
            text = text[authorityEnd...]
        }
        // The query, then the fragment: a fragment is never sent, but OAuth's implicit flow
        // puts `#access_token=…` there, and it would be stored and printed all the same.
        let fragmentStart = text.firstIndex(of: "#") ?? text.endIndex
        let beforeFragment = text[..<fragmentStart]
        if let questionMark = beforeFragment.firstIndex(of: "?") {
            result += beforeFragment[...questionMark]
            result += redactParameters(beforeFragment[beforeFragment.index(after: questionMark)...])
        } else {
            result += beforeFragment
        }
        if fragmentStart < text.endIndex {
            result += "#"
            result += redactParameters(text[text.index(after: fragmentStart)...])
        }
        return result
    }

    /// `name=value` pairs separated by `&` or `;` (HTML 4.01 §B.2.2 allows `;`), separators
    /// kept as they were, with the values of secret names replaced.
    private func redactParameters(_ text: Substring) -> String {
        var result = ""
        var start = text.startIndex
        while true {
            let end = text[start...].firstIndex(where: { $0 == "&" || $0 == ";" }) ?? text.endIndex
            let parameter = text[start..<end]
            let name = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? parameter
            let decoded = String(name).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(name)
            if secretParameterNames.contains(FieldSyntax.asciiLowercased(decoded)) {
                result += "\(name)=\(Self.placeholder)"
            } else {
                result += parameter
            }
            guard end < text.endIndex else { return result }
            result.append(text[end])
            start = text.index(after: end)
        }
    }

    /// Whether `string` holds a value this redaction replaced (a secret parameter whose value
    /// is ``placeholder``): such a stored URL cannot be requested again as it is.
    public func isRedacted(_ string: String) -> Bool {
        guard let questionMark = string.firstIndex(of: "?") else { return false }
        let query = string[string.index(after: questionMark)...].prefix { $0 != "#" }
        return query.split(whereSeparator: { $0 == "&" || $0 == ";" }).contains { parameter in
            let parts = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decoded = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            return parts.count == 2 && parts[1] == Self.placeholder && secretParameterNames.contains(FieldSyntax.asciiLowercased(decoded))
        }
    }

    /// Whether `string` has userinfo or a secret query parameter, so storing it as it is
    /// would store a credential.
    public func hasSecret(_ string: String) -> Bool {
        redact(string) != string
    }
}
