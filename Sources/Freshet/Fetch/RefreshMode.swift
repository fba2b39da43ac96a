/// How ``Store/refresh(_:mode:)`` asks the server.
public enum RefreshMode: Sendable, Hashable {
    /// Conditional requests from the stored validators (`If-None-Match`, `If-Modified-Since`;
    /// RFC 9110 §13.1): a 304 keeps the rows. What ``Store/refresh(_:)`` does.
    case revalidate
    /// Unconditional requests: no validator is sent, the server answers with full bodies and
    /// the rows are replaced (`reloadIgnoringLocalCacheData` in `URLRequest.CachePolicy` terms).
    case reload
}
