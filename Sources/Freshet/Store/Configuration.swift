import Foundation
import FreshetHTTP

/// How the store keeps its data and where it fetches from.
public struct Configuration: Sendable {
    /// How hard a commit works to reach the disk. Pending writes are user data: choose
    /// ``Durability/full`` unless losing the last commits on a power cut is acceptable.
    public enum Durability: Sendable, Hashable {
        /// `fsync` on every commit (group-committed, so concurrent appends share one), and on
        /// Apple platforms `fcntl(F_FULLFSYNC)` after it, since Darwin's `fsync` leaves data in
        /// the drive's cache (docs/reliability.md). An OS crash or power cut loses nothing
        /// that was committed.
        case full
        /// LMDB `MDB_NOMETASYNC`: data is flushed, the meta page only with the next commit.
        /// An OS crash may lose the last committed transaction; the store stays intact.
        case relaxed
        /// LMDB `MDB_NOSYNC`: nothing is flushed. An OS crash may lose any commits since the
        /// OS last wrote back, and may corrupt the store unless the file system keeps write
        /// order (LMDB's `MDB_NOSYNC` doc); for tests and throwaway caches. A process crash
        /// loses nothing.
        case none
    }

    /// See ``Durability``. Default ``Durability/full``.
    public var durability: Durability = .full
    /// The largest size the store file may grow to, in bytes (LMDB map size). Default 1 GiB.
    /// Appends beyond it fail with ``StoreError/mapFull`` and change nothing.
    public var mapSize: Int = 1 << 30
    /// The size of LMDB's reader table: how many read transactions may be open at once, in
    /// all processes that have the store open (`mdb_env_set_maxreaders`; LMDB's default 126).
    /// Only the process that creates `lock.mdb` sets it; later openers use the table as it is.
    /// Slots left by processes that died mid-read are cleared at open and when the table is
    /// full. Must be 1 ... 100,000, else opening fails with ``StoreError/invalidConfiguration``.
    public var maxReaders: Int = 126
    /// How far the map may grow: when a write fails because the map is full (LMDB
    /// `MDB_MAP_FULL`), the store doubles the map size (`mdb_env_set_mapsize`, while no
    /// transaction of this process is open) up to this many bytes and retries; only past it
    /// does the write fail with ``StoreError/mapFull``. Default 8 GiB; values below
    /// ``mapSize`` mean no growth. Growth lasts while the store is open: the next open starts
    /// from ``mapSize`` again, or from the file's size when that is larger (LMDB keeps the larger).
    public var maxMapSize: Int = 8 << 30
    /// The store's self-compaction policy; nil (the default): the log is compacted only when
    /// the app calls ``Store/compact(keeping:progress:)`` or runs `freshet compact`.
    public var compaction: CompactionPolicy?
    /// How often the store looks for events other processes appended (an app extension
    /// writing the same store), with ``Store/checkForExternalChanges()`` on the dependencies'
    /// clock; nil (the default): only on this process's commits, ``Store/didBecomeActive()``
    /// and explicit calls. Each check is one read transaction.
    public var externalChangeCheckInterval: Duration?
    /// How long a fetched collection nobody observes is kept before garbage collection evicts
    /// its rows and SyncMark (TanStack Query's `gcTime`); ``Resource/gcTime`` overrides it per
    /// resource. Default 24 hours: the value TanStack Query's persistence guide recommends for
    /// a cache kept on disk (its 5-minute default is for an in-memory cache; a lower `gcTime`
    /// would drop persisted queries before they could be restored), so a relaunch offline
    /// still shows yesterday's screens. ``GCTime/never`` turns garbage collection off.
    /// Collections with pending mutations and local-only collections are never evicted;
    /// see docs/queries.md, "Garbage collection".
    public var gcTime: GCTime = .after(.seconds(86_400))
    /// The base URL that relative ``Resource`` paths resolve against, such as
    /// `http://127.0.0.1:8080`. Nil: resources must use absolute URLs.
    public var baseURL: URL?
    /// The freshness policy of resources that do not set their own. Default ``FreshnessPolicy/http``:
    /// what the server's `Cache-Control`, `Expires` and `Age` say (RFC 9111 §4.2).
    public var defaultFreshness: FreshnessPolicy = .http
    /// Headers sent with every request to the credential origin, such as `Accept` or an API
    /// key: bound to the origin of ``baseURL`` like `Authorization`, never sent to another
    /// origin (a redirect target) and never stored (docs/security.md).
    public var defaultHeaders: [String: String] = ["Accept": "application/json"]
    /// How long a request may wait for data before it fails with `timedOut`; nil: the
    /// transport's default (30 s for `URLSessionTransport`). An idle timeout: it restarts
    /// whenever data arrives. See ``requestDeadline`` for the whole exchange.
    public var requestTimeout: Duration?
    /// The longest one request may take in all, redirects included, from sending to the last
    /// body byte, however steadily data arrives (a trickling server). Default 300 s; must be
    /// greater than zero. Past it the attempt fails with ``FetchError/deadlineExceeded``
    /// (recorded as `fetchFailed`, retried like a timeout); a mutation stays pending and is
    /// retried. Enforced by the transport (``HTTPRequest/deadline``).
    public var requestDeadline: Duration = .seconds(300)
    /// The largest response body the store reads, in bytes after content decoding. Default
    /// 64 MiB (67,108,864); at least 0. Enforced while the body arrives (and at once when
    /// `Content-Length` announces more), so memory stays bounded: a larger response fails with
    /// ``FetchError/responseTooLarge``, recorded as `fetchFailed` and not retried (the server
    /// would send the same); a mutation's answer that large keeps the mutation pending. Keep
    /// it well under ``mapSize``.
    public var maxResponseBytes: Int = 64 << 20
    /// The most redirects one request follows (RFC 9110 §15.4; the Fetch standard's 20).
    /// Default 20; more fail with `transport`.
    public var maxRedirects: Int = 20
    /// Query parameter names (any case) whose values are secrets: URLs are stored in the log and
    /// printed with these values replaced by `REDACTED`, and userinfo (`user:pass@`) is always
    /// removed. Default: `access_token`, `token`, `api_key`, `apikey`, `key`, `signature`, `sig`.
    public var redactedQueryParameters: Set<String> = URLRedaction.defaultSecretParameterNames
    /// How failed requests are retried. See ``RetryPolicy``.
    public var retry = RetryPolicy()
    /// Adds `Authorization: Bearer …` to requests (fetches and mutations) to the credential
    /// origin (that of ``baseURL``) and renews the token once on a 401 from that origin; nil:
    /// none.
    public var authentication: Authentication?
    /// The most pages a paged collection holds: a refresh that walks every page, or a
    /// `loadMore`, that would fetch one more stops with a `tooManyPages` failure
    /// (``FetchError/Code/tooManyPages``) and keeps the pages so far.
    public var maxPages: Int = 10_000
    /// Whether the store sends pending mutations (at open, on ``Store/networkDidBecomeReachable()``,
    /// ``Store/didBecomeActive()``, after backoff and when a mutation is proposed). Tools that
    /// only inspect a store turn it off. Default true.
    public var sendsMutations = true

    /// Retries with exponential backoff and jitter.
    ///
    /// The delay before attempt *n*+1 is `min(maxDelay, baseDelay × 2^(n−1)) × (1 − jitter × r)`
    /// with `r` uniform in 0 ..< 1 from the store's random source: with the defaults about
    /// 1 s, 2 s, 4 s … never more than 30 s. A `Retry-After` header (RFC 9110 §10.2.3, seconds
    /// or an HTTP date) replaces the computed delay; one in the past means at once. For a
    /// refresh, one further away than ``maxRetryAfter`` ends the retries (the failure is
    /// returned); a mutation is never dropped, so its wait is capped at ``maxRetryAfter``.
    /// Retried: timeouts, refused or lost connections, 5xx, 408 and 429. Not retried: other
    /// 4xx, a malformed body, cancellation.
    public struct RetryPolicy: Sendable, Hashable {
        /// Attempts in all, including the first (1 = no retry). Default 3.
        public var maxAttempts: Int = 3
        /// The first retry's delay before jitter. Default 1 s.
        public var baseDelay: Duration = .seconds(1)
        /// The longest computed delay. Default 30 s.
        public var maxDelay: Duration = .seconds(30)
        /// The fraction of a delay that jitter may remove, 0 ... 1. Default 0.2.
        public var jitter: Double = 0.2
        /// The longest `Retry-After` the store waits for. Default 5 minutes.
        public var maxRetryAfter: Duration = .seconds(300)

        public init(maxAttempts: Int = 3, baseDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(30), jitter: Double = 0.2, maxRetryAfter: Duration = .seconds(300)) {
            self.maxAttempts = max(1, maxAttempts)
            self.baseDelay = baseDelay
            self.maxDelay = maxDelay
            self.jitter = min(1, max(0, jitter))
            self.maxRetryAfter = maxRetryAfter
        }

        /// The delay before attempt `attempt + 1`, for a uniform `random` in 0 ..< 1.
        public func delay(afterAttempt attempt: Int, random: Double) -> Duration {
            let exponent = min(max(attempt - 1, 0), 62)
            let base = baseDelay.timeInterval * pow(2, Double(exponent))
            let capped = min(maxDelay.timeInterval, base)
            return .milliseconds(Int64((capped * (1 - jitter * random) * 1000).rounded()))
        }
    }

    /// Bearer-token authentication: `token` is asked before each request (nil: send none);
    /// on a 401 the request is retried once with a newer token. Concurrent 401s (refreshes and
    /// mutations alike) share one call of `refresh`; a request rejected with a token older
    /// than the newest one handed out is retried with the newest without calling `refresh`
    /// (so rotating refresh tokens are spent once; see docs/freshness.md). Tokens never
    /// reach the log.
    public struct Authentication: Sendable {
        public var token: @Sendable () async throws -> String?
        public var refresh: @Sendable () async throws -> Void

        public init(token: @escaping @Sendable () async throws -> String?, refresh: @escaping @Sendable () async throws -> Void) {
            self.token = token
            self.refresh = refresh
        }
    }

    public init(durability: Durability = .full, baseURL: URL? = nil) {
        self.durability = durability
        self.baseURL = baseURL
    }
}
