import Foundation

/// How the store keeps its data and where it fetches from.
public struct Configuration: Sendable {
    /// How hard a commit works to reach the disk. Pending writes are user data: choose
    /// ``Durability/full`` unless losing the last commits on a power cut is acceptable.
    public enum Durability: Sendable, Hashable {
        /// `fsync` on every commit (group-committed, so concurrent appends share one). An
        /// OS crash or power cut loses nothing that was committed.
        case full
        /// LMDB `MDB_NOMETASYNC`: data is flushed, the meta page only with the next commit.
        /// An OS crash may lose the last committed transaction; the store stays intact.
        case relaxed
        /// LMDB `MDB_NOSYNC`: nothing is flushed. An OS crash may lose any commits since the
        /// OS last wrote back; for tests and throwaway caches. A process crash loses nothing.
        case none
    }

    /// See ``Durability``. Default ``Durability/full``.
    public var durability: Durability = .full
    /// The largest size the store file may grow to, in bytes (LMDB map size). Default 1 GiB.
    /// Appends beyond it fail with ``StoreError/mapFull`` and change nothing.
    public var mapSize: Int = 1 << 30
    /// The base URL that relative ``Resource`` paths resolve against, such as
    /// `http://127.0.0.1:8080`. Nil: resources must use absolute URLs.
    public var baseURL: URL?
    /// How long rows stay fresh after the server last confirmed them, for collections that
    /// were not given a lifetime of their own. Default 5 minutes.
    public var defaultMaxAge: Duration = .seconds(300)
    /// Headers sent with every request, such as `Accept`.
    public var defaultHeaders: [String: String] = ["Accept": "application/json"]
    /// The most pages one refresh follows before it stops with a `pagingLoop` failure.
    public var maxPages: Int = 10_000

    public init(durability: Durability = .full, baseURL: URL? = nil) {
        self.durability = durability
        self.baseURL = baseURL
    }
}
