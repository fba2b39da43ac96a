/// When a store compacts its own log (``Configuration/compaction``): on open, once enough
/// records have piled up since the last checkpoint, and whenever the app calls
/// ``Store/compact(keeping:progress:)`` without a window.
///
/// ```swift
/// var configuration = Configuration()
/// configuration.compaction = CompactionPolicy(keep: .seconds(3 * 86_400), threshold: 50_000)
/// ```
public struct CompactionPolicy: Sendable, Hashable {
    /// How much history to keep, by record time. Default 7 days (604,800 s).
    public var keep: Duration = .seconds(7 * 86_400)
    /// Compact on open when at least this many LSNs were assigned since the last checkpoint
    /// (or since the start). Default 100,000; must be at least 1.
    public var threshold: Int = 100_000
    /// Whether opening the store for writing compacts when ``threshold`` is reached. The
    /// compaction runs inside `Store.init` (it costs a fold of the covered records); a failure
    /// does not fail the open: ``Store/openCompaction`` holds it. Default true.
    public var onOpen: Bool = true

    public init(keep: Duration = .seconds(7 * 86_400), threshold: Int = 100_000, onOpen: Bool = true) {
        self.keep = keep
        self.threshold = threshold
        self.onOpen = onOpen
    }
}
