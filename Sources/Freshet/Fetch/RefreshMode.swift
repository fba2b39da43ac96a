/// How ``Store/refresh(_:mode:)`` asks the server.
public enum RefreshMode: Sendable, Hashable {
    /// Conditional requests from the stored validators (`If-None-Match`, `If-Modified-Since`;
    /// RFC 9110 §13.1): a 304 keeps the rows. What ``Store/refresh(_:)`` does.
    case revalidate
    /// Unconditional requests: no validator is sent, the server answers with full bodies and
    /// the rows are replaced (`reloadIgnoringLocalCacheData` in `URLRequest.CachePolicy` terms).
    case reload
    /// For a resource whose pages load on demand (``Resource/PageLoading/onDemand``): drops
    /// every loaded page after the first and fetches the first page unconditionally, as a
    /// new infinite list (TanStack's `resetQueries`); later pages come back with
    /// ``Store/loadMore(_:)``. Any other resource: the same as ``reload``.
    case firstPage
}
