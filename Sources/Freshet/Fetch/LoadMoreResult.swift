/// What one ``Store/loadMore(_:)`` did.
public enum LoadMoreResult: Sendable, Hashable {
    /// A page was appended (or, when nothing was loaded yet, the first page was fetched). The
    /// summary counts the pages fetched: one, unless the stored next URL was redacted and the
    /// loaded pages had to be walked again to learn it.
    case loaded(RefreshSummary)
    /// The server said the last loaded page is the last one (no next URL, no `Link`
    /// `rel="next"`, no cursor): nothing was sent and nothing was appended.
    case endReached
}
