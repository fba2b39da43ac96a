/// What an event records. The raw value is the kind byte of a log record (docs/log-format.md);
/// values are fixed forever and never reused.
public enum EventKind: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A response body folded in: a full replace, one page, or single rows.
    case fetched = 1
    /// A conditional request answered 304 Not Modified: rows kept, SyncMark touched.
    case notModified = 2
    /// A fetch attempt failed (status, timeout, refused connection, malformed body).
    case fetchFailed = 3
    /// Rows pushed by the server (realtime): upserts and deletes.
    case changed = 4
    /// An optimistic write, with its mutation ID and ops.
    case mutationProposed = 5
    /// The server accepted a mutation.
    case mutationConfirmed = 6
    /// The server rejected a mutation; its overlay is removed.
    case mutationRolledBack = 7
    /// A collection was marked stale by the app.
    case invalidated = 8
    /// A write to a local-only collection (favourites, drafts).
    case localWrite = 9
    /// Written by compaction: the folded state up to an LSN.
    case checkpoint = 10
    /// Garbage collection removed an unobserved collection's rows and SyncMark.
    case evicted = 11

    /// The name used by `freshet dump` and in docs, such as `fetchFailed`.
    public var name: String {
        switch self {
        case .fetched: "fetched"
        case .notModified: "notModified"
        case .fetchFailed: "fetchFailed"
        case .changed: "changed"
        case .mutationProposed: "mutationProposed"
        case .mutationConfirmed: "mutationConfirmed"
        case .mutationRolledBack: "mutationRolledBack"
        case .invalidated: "invalidated"
        case .localWrite: "localWrite"
        case .checkpoint: "checkpoint"
        case .evicted: "evicted"
        }
    }

    public var description: String { name }
}
