import Foundation

/// What `freshet export` hides. Row fields named in ``fields`` get the value `"[redacted]"`
/// wherever they occur in a row's JSON (at any depth); request headers that can carry
/// credentials are always redacted, whatever ``fields`` says.
public struct Redaction: Sendable, Hashable {
    /// The replacement value.
    public static let placeholder = "[redacted]"

    /// Field names to redact in rows and JSON bodies.
    public var fields: Set<String>

    public init(fields: Set<String> = []) { self.fields = fields }

    /// Whether a header with this name can carry a credential: `Authorization`,
    /// `Proxy-Authorization`, `Cookie`, `Set-Cookie`, and any name containing `token`,
    /// `secret`, `api-key`, `apikey`, `password` or `session` (case-insensitive).
    public static func isCredentialHeader(_ name: String) -> Bool {
        let n = name.lowercased()
        if ["authorization", "proxy-authorization", "cookie", "set-cookie"].contains(n) { return true }
        return ["token", "secret", "api-key", "apikey", "password", "session"].contains { n.contains($0) }
    }

    func header(_ name: String, _ value: String) -> String {
        Self.isCredentialHeader(name) ? Self.placeholder : value
    }

    /// `json` with the named fields replaced, re-serialized with sorted keys (as the store keeps
    /// rows); unchanged bytes when there is nothing to redact or the bytes are not JSON.
    func json(_ json: Data) -> Data {
        guard !fields.isEmpty else { return json }
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed])
        } catch {
            return json
        }
        var changed = false
        let redacted = redact(parsed, changed: &changed)
        guard changed else { return json }
        do {
            return try JSONSerialization.data(withJSONObject: redacted, options: [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed])
        } catch {
            // Never fall back to the unredacted bytes.
            return Data("\"\(Self.placeholder)\"".utf8)
        }
    }

    private func redact(_ value: Any, changed: inout Bool) -> Any {
        if let object = value as? [String: Any] {
            var out: [String: Any] = [:]
            for (k, v) in object {
                if fields.contains(k) {
                    out[k] = Self.placeholder
                    changed = true
                } else {
                    out[k] = redact(v, changed: &changed)
                }
            }
            return out
        }
        if let array = value as? [Any] { return array.map { redact($0, changed: &changed) } }
        return value
    }
}
