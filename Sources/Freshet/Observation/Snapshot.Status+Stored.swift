import Foundation

extension Snapshot.Status {
    /// The convenience summary of a query state (issue 10: "a convenience summary … derived
    /// from these"), so ``Snapshot/status`` never disagrees with ``Snapshot/query``: a fetch
    /// in flight is `loading` (no rows) or `refreshing`; else an ``QueryState/error`` is
    /// `failed`; else rows never confirmed by a server and none to show are `empty`; else
    /// ``QueryState/isStale`` gives `stale` or `fresh`. An attempt that could not connect is
    /// ``QueryState/FetchStatus/paused`` with no error (offline is not a failure), so it shows
    /// as `fresh`, `stale` or `empty`, never `failed` (docs/queries.md §2). The live store and
    /// `replay` both use it.
    public init(summarizing query: QueryState) {
        if query.fetch == .fetching {
            self = query.data == .empty ? .loading : .refreshing
        } else if let error = query.error {
            self = .failed(error: error, lastSyncedAt: query.dataUpdatedAt)
        } else if query.dataUpdatedAt == nil, query.data == .empty {
            self = .empty
        } else {
            self = query.isStale ? .stale : .fresh
        }
    }
}
