/// When a collection's rows are stale, so that `refreshIfNeeded` goes to the network.
///
/// | policy | stale when | network on `refreshIfNeeded` |
/// |---|---|---|
/// | `.always` | always | every call (conditional when validators are stored) |
/// | `.maxAge(d)` | `d` has passed since the server last confirmed the rows (a 2xx or 304) | once `d` has passed |
/// | `.http` | the response's freshness lifetime is used up (RFC 9111 §4.2); `no-cache` → always; `no-store` → rows kept in memory only | when the server's lifetime is used up |
/// | `.manual` | never by time | only after `invalidate` (or an explicit `refresh`) |
///
/// Under every policy a collection that was never fetched, or was invalidated since its
/// last fetch, is stale.
public enum FreshnessPolicy: Sendable, Hashable {
    case always
    case maxAge(Duration)
    case http
    case manual
}
