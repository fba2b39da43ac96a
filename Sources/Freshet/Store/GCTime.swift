/// How long a collection nobody observes stays in the store before garbage collection evicts
/// its rows and SyncMark (TanStack Query's `gcTime`; docs/queries.md, "Garbage collection").
///
/// ```swift
/// var configuration = Configuration()
/// configuration.gcTime = .after(.seconds(300))       // TanStack's in-memory default
/// var detail = Resource.document("pokemon/25", path: "/api/v2/pokemon/25/")
/// detail.gcTime = .never                              // this one is kept
/// ```
public enum GCTime: Sendable, Hashable {
    /// Evict a collection once nobody has observed, read or written it for this long
    /// (seconds and fractions, on the store's clock). Zero or less: at the collector's next pass.
    case after(Duration)
    /// Never evict.
    case never

    /// The duration, or nil for ``never``.
    public var duration: Duration? {
        switch self {
        case .after(let d): max(d, .zero)
        case .never: nil
        }
    }
}
