import Foundation

/// A URL's origin: scheme, host and port (RFC 6454 §4), the unit credentials are bound to.
///
/// ```swift
/// Origin(URL(string: "https://api.example.com/v1/items")!)   // https://api.example.com:443
/// Origin(URL(string: "HTTP://Example.COM:80/")!) == Origin(URL(string: "http://example.com/")!)  // true
/// ```
///
/// Scheme and host are compared in ASCII lowercase; a missing port is the scheme's default
/// (80 for `http`, 443 for `https`), so `http://h/` and `http://h:80/` are one origin.
/// Userinfo (`user:pass@`) and the path are not part of an origin. Only `http` and `https`
/// URLs with a host have one.
public struct Origin: Sendable, Hashable, CustomStringConvertible {
    /// `http` or `https`, lowercase.
    public let scheme: String
    /// The host, lowercase, without brackets for IPv6.
    public let host: String
    /// The port, with the scheme's default filled in.
    public let port: Int

    /// The origin of `url`, or nil when it is not an absolute `http`/`https` URL with a host.
    public init?(_ url: URL) {
        guard let scheme = url.scheme.map(FieldSyntax.asciiLowercased), scheme == "http" || scheme == "https",
              let host = url.host(percentEncoded: false), !host.isEmpty
        else { return nil }
        self.scheme = scheme
        self.host = FieldSyntax.asciiLowercased(host)
        self.port = url.port ?? (scheme == "https" ? 443 : 80)
    }

    /// Whether `url` has this origin.
    public func contains(_ url: URL) -> Bool {
        Origin(url) == self
    }

    /// `scheme://host:port`, IPv6 hosts in brackets, e.g. `http://127.0.0.1:8080`.
    public var description: String {
        "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }
}
