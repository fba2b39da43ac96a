import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FreshetHTTP
import Synchronization

/// What one refresh did.
public struct RefreshSummary: Sendable, Hashable {
    /// How many pages (requests that succeeded) the refresh went through.
    public var pages: Int
    /// How many of them the server answered 304 Not Modified.
    public var notModified: Int
    /// How many rows the 2xx pages held in all.
    public var rows: Int
    /// The LSN of the last event appended.
    public var lsn: LSN
}

extension Store {
    // MARK: Public API

    /// Fetches `resource` from the network and appends what happened: per page a `fetched`
    /// event (a 2xx), a `notModified` event (a 304 to the conditional request made from the
    /// stored validators), or a `fetchFailed` event per failed attempt.
    ///
    /// Concurrent refreshes of the same resource (same collection and parameters, in any
    /// order) share one request and its outcome. A refresh joins only a request that is still
    /// in flight: once a request's last commit is made (before observers are told of it), a
    /// new refresh sends a new request. A refresh asked for after ``invalidate(_:reason:)``
    /// does not join a request that started before; it runs after it. While it runs,
    /// observers see ``Snapshot/Status/loading`` or ``Snapshot/Status/refreshing``.
    ///
    /// Cancelling the calling task detaches this caller only: it throws `cancelled` at once,
    /// and the shared request goes on for the callers still waiting. The request itself is
    /// cancelled when its last caller leaves (see docs/freshness.md).
    ///
    /// - Throws: ``FetchError``: `httpStatus` (a 4xx, or a 5xx/408/429 after the last
    ///   attempt), `timedOut`, `cannotConnect`, `connectionLost`, `malformedBody`,
    ///   `pagingLoop`, `deadlineExceeded`, `responseTooLarge`, `crossOrigin` (a next page on
    ///   another origin), `transport` — each attempt was appended as `fetchFailed`, and the
    ///   collection keeps its rows. `cancelled` when the task was cancelled (or every caller
    ///   of the shared request was): the retry loop stops and nothing more is appended.
    ///   `invalidURL` (nothing sent) and `storage` (the store cannot append) append nothing.
    @discardableResult
    public func refresh(_ resource: Resource) async throws(FetchError) -> RefreshSummary {
        try await refresh(resource, mode: .revalidate)
    }

    /// Like ``refresh(_:)``, and with ``RefreshMode/reload`` every request is unconditional:
    /// no `If-None-Match` / `If-Modified-Since` is sent even when validators are stored, so the
    /// server answers with the full body (what `URLRequest.CachePolicy.reloadIgnoringLocalCacheData`
    /// gives a `URLCache` user). A reload shares a request only with other reloads of the same
    /// resource, never with a conditional refresh in flight.
    /// - Throws: what ``refresh(_:)`` throws; a 304 to an unconditional request is `httpStatus`
    ///   (RFC 9110 §15.4.5).
    @discardableResult
    public func refresh(_ resource: Resource, mode: RefreshMode) async throws(FetchError) -> RefreshSummary {
        let (url, plainKey) = try prepareRefresh(resource)
        let key = switch mode {
        case .revalidate: plainKey
        case .reload: plainKey + " reload"
        case .firstPage: plainKey + " firstPage"
        }
        guard let result = await shareRefresh(resource, url: url, key: key, mode: mode, unlessEndedSince: nil) else {
            preconditionFailure("a refresh without a recheck point always joins or starts a request")
        }
        return try result.get()
    }

    /// Refreshes `resource` only when its collection is stale under its freshness policy
    /// (see ``FreshnessPolicy``); returns nil without any request when it is fresh. A stale
    /// collection joins the refresh in flight, if any; a request that ends between reading
    /// the collection and joining makes it read the collection again, and so does a request of
    /// the collection of another kind in flight (a ``loadMore(_:)``, a reload or a first-page
    /// reset), once it has ended: an observer's first fetch does not fetch page 1 again after a
    /// `loadMore` asked for first.
    /// - Throws: what ``refresh(_:)`` throws.
    @discardableResult
    public func refreshIfNeeded(_ resource: Resource) async throws(FetchError) -> RefreshSummary? {
        refreshes.register(resource)
        var prepared: (url: URL, key: String)?
        while true {
            let endings = refreshes.endings(resource.collection)
            let mark: SyncMark?
            do {
                mark = try syncMark(resource.collection)
            } catch {
                throw FetchError(.storage, error.message, url: urlRedaction.redact(resource.path))
            }
            guard freshness(of: resource.collection, mark: mark).isStale else { return nil }
            let request: (url: URL, key: String)
            if let prepared { request = prepared } else { request = try prepareRefresh(resource) }
            prepared = request
            if let result = await shareRefresh(resource, url: request.url, key: request.key, mode: .revalidate, unlessEndedSince: endings) {
                return try result.get()
            }
            // A request of this collection ended after the read: look at what it left.
        }
    }

    /// Observes `resource`'s collection like ``observe(_:)-(String)`` and, like TanStack
    /// Query's `useQuery`, refreshes it in the background when it is stale: at once (when the
    /// first snapshot, the stored rows, is stale under the resource's policy), and again
    /// whenever it reaches its `staleAt` while observed (the store's staleness timer) or a
    /// delivered snapshot shows it evicted. The stored rows come first, at once; fetch failures
    /// show in the snapshots' status and in the log (docs/freshness.md, "What observers receive").
    public func observe(_ resource: Resource) -> CollectionObservation {
        refreshes.register(resource)
        return hub.subscribe(resource.collection, afterFirst: { [weak self] first in
            guard let self else { return }
            // "At once" judges the snapshot the observer was just shown. A task that read the
            // store later could see another process's commit (an eviction) before this process
            // adopted it, and refetch on it; a change after the first snapshot reaches the
            // observer as a delivery instead (an eviction refetches there, see ObserverHub).
            if let first, !self.freshness(of: resource.collection, mark: first.syncMark).isStale { return }
            self.startBackgroundRefresh(resource, onlyIfStale: true)
        }, onStale: { [weak self] in
            // Time made it stale: refresh if the policy says so (refreshIfNeeded decides).
            self?.startBackgroundRefresh(resource, onlyIfStale: true)
        })
    }

    /// Invalidates every collection of the keyed query `name` — `name` itself and every
    /// `name{…}` key (TanStack's partial key matching), see ``QueryKey``; returns the
    /// collections invalidated, sorted. Observed ones with a registered resource are
    /// refreshed by their observers' next lifecycle call or staleness check.
    /// - Throws: what ``invalidate(_:reason:)`` throws; collections before the failing one stay invalidated.
    @discardableResult
    public func invalidate(keysNamed name: String, reason: String? = nil) async throws(StoreError) -> [String] {
        let matching = try collections().filter { QueryKey.collection($0, isKeyOf: name) }
        for collection in matching { try await invalidate(collection, reason: reason) }
        return matching
    }

    /// Tells the store the app came to the foreground: wakes the mutation queues and
    /// refreshes every observed collection that is stale, returning when those refreshes have
    /// finished. Fresh collections make no request. Failures are recorded in the log and the
    /// snapshots' status.
    public func didBecomeActive() async {
        // Another process (an app extension) may have written meanwhile: observers hear of it.
        do {
            try checkForExternalChanges()
        } catch {
            // A store that cannot be read reports it on the observers' next read; activation goes on.
        }
        kickMutationQueues()
        await refreshObservedStaleCollections()
    }

    /// Tells the store the network is reachable again: like ``didBecomeActive()``.
    public func networkDidBecomeReachable() async {
        kickMutationQueues()
        await refreshObservedStaleCollections()
    }

    // MARK: Shared requests

    /// Checks what ``refresh(_:)`` needs before anything is sent; returns the URL and the
    /// request key that callers share a request by.
    func prepareRefresh(_ resource: Resource) throws(FetchError) -> (URL, String) {
        let url = try resource.url(relativeTo: configuration.baseURL)
        do {
            try checkOpen()
            try Keys.validate(collection: resource.collection)
        } catch {
            throw FetchError(.storage, error.message, url: logged(url))
        }
        refreshes.register(resource)
        return (url, try resource.requestKey(relativeTo: configuration.baseURL))
    }

    /// Joins the request in flight for `key`, or starts one, and waits for its outcome; a
    /// cancelled caller stops waiting at once (see ``RefreshState/leave(waiter:)``). Nil only
    /// with `unlessEndedSince`, when a request of the collection ended since then.
    func shareRefresh(_ resource: Resource, url: URL, key: String, mode: RefreshMode, loadingMore: Bool = false, unlessEndedSince: Int?) async -> RefreshState.Delivery {
        let refreshes = self.refreshes
        let waiter = refreshes.makeWaiterID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                refreshes.share(key: key, collection: resource.collection, url: logged(url), waiter: waiter,
                                unlessEndedSince: unlessEndedSince, start: { id, previous in
                    Task {
                        // An older request for the same key folds first; its outcome does not matter here.
                        if let previous { await previous.value }
                        let result: Result<RefreshSummary, FetchError>
                        if Task.isCancelled {
                            result = .failure(FetchError(.cancelled, "GET \(logged(url)) was cancelled", url: logged(url)))
                        } else {
                            do throws(FetchError) {
                                result = .success(try await self.performRefresh(resource, from: url, mode: mode, loadingMore: loadingMore, request: id))
                            } catch {
                                result = .failure(error)
                            }
                        }
                        refreshes.complete(id, with: result)
                    }
                }, continuation)
            }
        } onCancel: {
            refreshes.leave(waiter: waiter)
        }
    }

    // MARK: Background work

    /// What the lifecycle calls refresh: every observed collection that is stale or whose last
    /// attempt failed, and every collection (observed or not) whose fetch is paused because
    /// the network could not be reached. A failed or paused one is refetched even when its
    /// rows are fresh, so that its error clears (or shows again) the way users expect.
    func refreshObservedStaleCollections() async {
        let observed = hub.observedCollections
        var resources: [(Resource, onlyIfStale: Bool)] = []
        for resource in refreshes.registeredResources().sorted(by: { $0.collection < $1.collection }) {
            let mark: SyncMark?
            do {
                mark = try syncMark(resource.collection)
            } catch {
                continue // unreadable: the observers' next read reports it
            }
            let failing = (mark?.consecutiveFailures ?? 0) > 0
            let paused = failing && mark?.lastError?.reason == FetchError.Code.cannotConnect.rawValue
            if paused || (failing && observed.contains(resource.collection)) {
                resources.append((resource, false))
            } else if observed.contains(resource.collection) {
                resources.append((resource, true))
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for (resource, onlyIfStale) in resources {
                group.addTask { await self.refreshRecordingFailure(resource, onlyIfStale: onlyIfStale) }
            }
        }
    }

    func startBackgroundRefresh(_ resource: Resource, onlyIfStale: Bool = false) {
        Task { await self.refreshRecordingFailure(resource, onlyIfStale: onlyIfStale) }
    }

    /// Refreshes, leaving failures to the log and the snapshots' status: background refreshes
    /// have no caller to throw to.
    private func refreshRecordingFailure(_ resource: Resource, onlyIfStale: Bool) async {
        do {
            if onlyIfStale { try await refreshIfNeeded(resource) } else { try await refresh(resource) }
        } catch {
            // Recorded as fetchFailed (or cancelled, which records nothing by design).
        }
    }

    // MARK: One refresh

    /// Runs shared request `request` (see ``RefreshState``): a refresh, or with `loadingMore`
    /// a ``loadMore(_:)``. Which pages it fetches is decided here, after any older request of
    /// the collection has folded (see ``PageWalk``).
    private func performRefresh(_ resource: Resource, from start: URL, mode: RefreshMode, loadingMore: Bool, request: UInt64) async throws(FetchError) -> RefreshSummary {
        let collection = resource.collection
        let stored: SyncMark?
        do {
            stored = try syncMark(collection)
        } catch {
            throw FetchError(.storage, error.message, url: logged(start))
        }
        let paged = resource.isPaged
        let walk = loadingMore ? PageWalk.loadingMore(resource, start: start, stored: stored, redaction: urlRedaction)
            : PageWalk.refreshing(resource, start: start, mode: mode, stored: stored, redaction: urlRedaction)
        var summary = RefreshSummary(pages: 0, notModified: 0, rows: 0, lsn: .zero)
        // The server said there is no next page: nothing to send, nothing to show.
        guard let walk else { return summary }
        refreshes.beginFetch(collection)
        hub.publish([collection])
        // The last page's commit ends the fetch itself (see `appendForRefresh`), so its one
        // emission shows the new rows as fresh and no refresh asked for after it can join
        // this request; any other way out ends it here.
        let fetch = FetchInFlight(request: request)
        defer {
            if fetch.end() { refreshes.endFetch(collection, request: request) }
            hub.publish([collection])
        }
        let policy = resource.freshness ?? configuration.defaultFreshness
        let readPolicy = ReadPolicy(freshness: policy, retry: configuration.retry)
        let unconditional = mode == .reload || mode == .firstPage
        var url = walk.url
        var page = walk.first
        // The pages this walk fetched, by their real URLs (in memory only), each spelling of
        // one URL as one (ComparableURL): a next link back to one of them is a loop.
        var seen: [ComparableURL: Int] = [ComparableURL(url): page]
        func repeatedPage(_ candidate: URL) -> Int? {
            seen[ComparableURL(candidate)] ?? walk.earlier[ComparableURL(logged(candidate))]
        }
        if page > 0 {
            // A stored next page (loadMore, or a resumed revalidation): the same rules as a
            // next link followed within one walk.
            let previous = stored.flatMap { page - 1 < $0.pages.count ? $0.pages[page - 1].url : nil } ?? logged(start)
            let named = URL(string: previous) ?? start
            if let refusal = pagingRefusal(next: url, home: start) {
                throw await fail(collection, .crossOrigin, "paging of \(collection) stopped after page \(page): \(refusal)",
                                 status: nil, url: named, page: page - 1, attempt: 1, duration: nil, ending: fetch)
            }
            if let held = walk.earlier[ComparableURL(logged(url))] {
                throw await fail(collection, .pagingLoop, Self.loopMessage(collection, page: page, url: logged(url), repeats: held),
                                 status: nil, url: named, page: page - 1, attempt: 1, duration: nil, ending: fetch)
            }
            if page >= configuration.maxPages {
                throw await fail(collection, .tooManyPages, tooManyPagesMessage(collection, pages: page, next: url),
                                 status: nil, url: named, page: page - 1, attempt: 1, duration: nil, ending: fetch)
            }
        }
        while true {
            let validators = unconditional ? (etag: nil, lastModified: nil)
                : Self.validators(for: url, page: paged ? page : nil, in: stored, redaction: urlRedaction)
            let basis = lastLSN
            let outcome = try await exchangeWithRetries(resource, url: url, page: paged ? page : nil, validators: validators, fetch: fetch)
            var next: URL?
            let final: Bool
            switch outcome {
            case .notModified(let response):
                let storedNext = paged && page < (stored?.pages.count ?? 0) ? stored?.pages[page].next : nil
                next = storedNext.flatMap { URL(string: $0) }
                final = next == nil || page == walk.last
                let event = Event.NotModified(response: Self.info(response, url: logged(url)), page: paged ? page : nil, basisLSN: basis,
                                              readPolicy: readPolicy)
                summary.lsn = try await appendForRefresh(.notModified(event), to: collection, url: url, ending: final ? fetch : nil)
                summary.notModified += 1
            case .fetched(let response, let extracted):
                switch resource.paging {
                case .none: next = nil
                case .nextField:
                    if let text = extracted.next {
                        // A next link that is not a URL must not pass for "last page": that
                        // would fold this page as the end and drop the stored later pages.
                        guard let resolved = URL(string: text, relativeTo: response.url)?.absoluteURL, resolved.host != nil else {
                            throw await fail(collection, .malformedBody, "paging of \(collection) stopped at page \(page + 1): its next link (\(text.utf8.count) bytes) is not a URL",
                                             status: response.status, url: url, page: paged ? page : nil, attempt: 1, duration: nil, ending: fetch)
                        }
                        next = resolved
                    }
                case .linkHeader: next = LinkHeader(headers: response.headers, baseURL: response.url).url(rel: "next")
                case .cursor(let field, let parameter):
                    if let cursor = extracted.next {
                        guard let built = Self.url(start, setting: parameter, to: cursor) else {
                            throw await fail(collection, .malformedBody, "paging of \(collection) stopped at page \(page + 1): its cursor \(field.debugDescription) does not make a URL",
                                             status: response.status, url: url, page: paged ? page : nil, attempt: 1, duration: nil, ending: fetch)
                        }
                        next = built
                    }
                }
                if !paged { next = nil }
                if paged, let refusal = Self.pageRefusal(extracted.rows, next: next) {
                    throw await fail(collection, refusal.code, "paging of \(collection) stopped at page \(page + 1) (\(logged(url))): \(refusal.message)",
                                     status: response.status, url: url, page: paged ? page : nil, attempt: 1, duration: nil, ending: fetch)
                }
                final = next == nil || page == walk.last
                let noStore = policy == .http && CacheControl(headers: response.headers).noStore
                let placement: Event.Fetched.Placement = switch (resource.rows, paged) {
                case (.document, _): .upsert
                case (_, false): .replace
                case (_, true): .page(index: page, isLast: next == nil || (final && walk.dropsLaterPages))
                }
                if noStore {
                    // Snapshots show these rows to users: each in storage of its own.
                    let rows = extracted.rows.map(\.rebased)
                    switch placement {
                    case .upsert: refreshes.upsertVolatile(rows, collection: collection)
                    case .replace: refreshes.setVolatile(rows, collection: collection, page: 0, isLast: true)
                    case .page(let index, let isLast): refreshes.setVolatile(rows, collection: collection, page: index, isLast: isLast)
                    }
                } else {
                    refreshes.clearVolatile(collection)
                }
                let event = noStore
                    ? Event.Fetched(placement: placement, rows: [], response: Self.info(response, url: logged(url)),
                                    nextCursor: next.map(logged), basisLSN: basis, rowsWithheld: true, readPolicy: readPolicy)
                    : Event.Fetched(placement: placement, rows: extracted.rows, slices: extracted.slices, response: Self.info(response, url: logged(url)),
                                    nextCursor: next.map(logged), basisLSN: basis, readPolicy: readPolicy)
                summary.lsn = try await appendForRefresh(.fetched(event), to: collection, url: url, ending: final ? fetch : nil)
                summary.rows += extracted.rows.count
            }
            summary.pages += 1
            guard !final, let candidate = next else { break }
            if let refusal = pagingRefusal(next: candidate, home: start) {
                throw await fail(collection, .crossOrigin, "paging of \(collection) stopped after page \(page + 1): \(refusal)",
                                 status: nil, url: url, page: paged ? page : nil, attempt: 1, duration: nil, ending: fetch)
            }
            if let repeated = repeatedPage(candidate) {
                throw await fail(collection, .pagingLoop, Self.loopMessage(collection, page: page + 1, url: logged(candidate), repeats: repeated),
                                 status: nil, url: url, page: paged ? page : nil, attempt: 1, duration: nil, ending: fetch)
            }
            if page + 1 >= configuration.maxPages {
                throw await fail(collection, .tooManyPages, tooManyPagesMessage(collection, pages: page + 1, next: candidate),
                                 status: nil, url: url, page: paged ? page : nil, attempt: 1, duration: nil, ending: fetch)
            }
            seen[ComparableURL(candidate)] = page + 1
            page += 1
            url = candidate
        }
        return summary
    }

    /// `pagingLoop`'s message: page `page` (0-based) would be `url`, which is page `repeats`
    /// (0-based) spelled the same or another way (see ``ComparableURL``).
    static func loopMessage(_ collection: String, page: Int, url: String, repeats: Int) -> String {
        "paging of \(collection) does not end: page \(page + 1) would be \(url), the same page as page \(repeats + 1)"
    }

    /// `tooManyPages`' message: the collection has `pages` pages and the next, `next`, would
    /// be one more than ``Configuration/maxPages``.
    func tooManyPagesMessage(_ collection: String, pages: Int, next: URL) -> String {
        "paging of \(collection) stopped at Configuration.maxPages (\(configuration.maxPages)) pages: page \(pages + 1) (\(logged(next))) is not fetched"
    }

    /// Why a fetched page of a paged resource must not be folded, or nil: it holds an ID
    /// twice (which of the two is the row?), or it is empty yet names a next page (paging
    /// could go on forever without rows).
    static func pageRefusal(_ rows: [Row], next: URL?) -> (code: FetchError.Code, message: String)? {
        if rows.isEmpty, next != nil {
            return (.emptyPage, "the page has no rows but names a next page")
        }
        if let i = firstRepeatedID(rows) {
            return (.duplicateRowIDs, "row \(i) has ID \(rows[i].id.debugDescription), which an earlier row of the page has")
        }
        return nil
    }

    /// The index of the first row whose ID an earlier row has, or nil: what a `Set<String>`
    /// answers (`String` equality, so canonically equivalent IDs are one ID), for a fifth of
    /// the cost on a 1,000-row page (docs/performance.md, round 9). When every ID is ASCII
    /// (equal exactly when their bytes are), the row indices go into an open-addressed table
    /// keyed by a hash of each ID's bytes, seeded per process so a server cannot aim IDs at
    /// one slot; a page with a non-ASCII ID, or a probe longer than `probeLimit` slots, is
    /// checked with the `Set`.
    static func firstRepeatedID(_ rows: [Row], probeLimit: Int = 32) -> Int? {
        var capacity = 16
        while capacity < 2 * rows.count { capacity <<= 1 }
        let mask = capacity - 1
        let found: Int?? = rows.withUnsafeBufferPointer { rows -> Int?? in
            var slots = [Int](repeating: -1, count: capacity)
            return slots.withUnsafeMutableBufferPointer { slots -> Int?? in
                for i in 0..<rows.count {
                    var id = rows[i].id
                    guard let hash = id.withUTF8({ Self.asciiHash($0) }) else { return nil }
                    var slot = hash & mask
                    var probes = 0
                    while true {
                        let held = slots[slot]
                        if held < 0 {
                            slots[slot] = i
                            break
                        }
                        if rows[held].id == id { return .some(i) }
                        probes += 1
                        if probes > probeLimit { return nil }
                        slot = (slot + 1) & mask
                    }
                }
                return .some(nil)
            }
        }
        if let found { return found }
        var ids = Set<String>()
        ids.reserveCapacity(rows.count)
        for (i, row) in rows.enumerated() where !ids.insert(row.id).inserted { return i }
        return nil
    }

    private static let idHashSeed = UInt64.random(in: .min ... .max) | 1

    /// A seeded multiply-xorshift hash of `bytes`, 8 bytes a step; nil when they are not all
    /// ASCII.
    private static func asciiHash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var h = idHashSeed ^ UInt64(bytes.count)
        var high: UInt64 = 0
        var i = 0
        let raw = UnsafeRawBufferPointer(bytes)
        while i + 8 <= raw.count {
            let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            high |= word
            h = (h ^ word) &* 0x9E37_79B9_7F4A_7C15
            h ^= h >> 29
            i += 8
        }
        if i < raw.count {
            var tail: UInt64 = 0
            for k in i..<raw.count { tail = tail << 8 | UInt64(raw[k]) }
            high |= tail
            h = (h ^ tail) &* 0x9E37_79B9_7F4A_7C15
            h ^= h >> 29
        }
        guard high & 0x8080_8080_8080_8080 == 0 else { return nil }
        h = (h ^ idHashSeed) &* 0xBF58_476D_1CE4_E5B9
        return Int(truncatingIfNeeded: h ^ (h >> 31))
    }

    /// `start` with query parameter `name` set to `value` (replacing any `name`): the URL of
    /// the page an opaque cursor names. Nil when no URL can be built.
    static func url(_ start: URL, setting name: String, to value: String) -> URL? {
        guard var components = URLComponents(url: start, resolvingAgainstBaseURL: true) else { return nil }
        var items = (components.queryItems ?? []).filter { $0.name != name }
        items.append(URLQueryItem(name: name, value: value))
        components.queryItems = items.sorted { $0.name < $1.name }
        return components.url
    }

    /// Appends a refresh's event; with `ending`, the commit also ends the fetch, before
    /// observers hear of it.
    private func appendForRefresh(_ event: Event, to collection: String, url: URL, ending fetch: FetchInFlight?) async throws(FetchError) -> LSN {
        do {
            return try await append([(collection, event)], onCommitted: ending(fetch, collection))
        } catch {
            throw FetchError(.storage, "could not append the response of \(logged(url)): \(error.message)", url: logged(url))
        }
    }

    /// What a commit runs to end `fetch` (nil: the commit does not end it).
    private func ending(_ fetch: FetchInFlight?, _ collection: String) -> (@Sendable () -> Void)? {
        guard let fetch else { return nil }
        let refreshes = self.refreshes
        return { if fetch.end() { refreshes.endFetch(collection, request: fetch.request) } }
    }

    /// The validators stored for this request: the page's own for paged collections (when
    /// the stored page has the same URL), the collection's otherwise. `url` is compared in its
    /// stored (redacted) form. A page whose stored `next` was redacted gets none: a 304 would
    /// leave only that unusable `next`, so the page is fetched whole to learn the real one.
    static func validators(for url: URL, page: Int?, in mark: SyncMark?, redaction: URLRedaction = URLRedaction()) -> (etag: String?, lastModified: String?) {
        guard let mark, mark.validatedAt != nil, !mark.noStore else { return (nil, nil) }
        if let page {
            guard page < mark.pages.count, mark.pages[page].url == redaction.string(for: url),
                  !(mark.pages[page].next.map(redaction.isRedacted) ?? false) else { return (nil, nil) }
            return (mark.pages[page].etag, mark.pages[page].lastModified)
        }
        return (mark.etag, mark.lastModified)
    }

    // MARK: One request, with retries

    enum Outcome {
        case fetched(HTTPResponse, RowExtraction.Result)
        case notModified(HTTPResponse)
    }

    private struct AttemptFailure: Error {
        var code: FetchError.Code
        var message: String
        var status: Int?
        var retryable: Bool
        var retryAfter: RetryAfter?
        var duration: Duration?
    }

    /// Sends the GET, retrying per ``Configuration/retry``; every failed attempt is appended
    /// as `fetchFailed` with its attempt number.
    private func exchangeWithRetries(_ resource: Resource, url: URL, page: Int?, validators: (etag: String?, lastModified: String?), fetch: FetchInFlight) async throws(FetchError) -> Outcome {
        let policy = configuration.retry
        var attempt = 1
        while true {
            try Task.checkCancellation(or: logged(url))
            let failure: AttemptFailure
            switch await attemptOnce(resource, url: url, validators: validators) {
            case .success(let outcome): return outcome
            case .failure(let f): failure = f
            }
            if failure.code == .cancelled {
                throw FetchError(.cancelled, failure.message, url: logged(url))
            }
            var delay: Duration?
            var message = failure.message
            // Offline is not retried with backoff: the fetch pauses (the snapshot says so at
            // once) and resumes on networkDidBecomeReachable() or didBecomeActive().
            if failure.retryable && failure.code != .cannotConnect && attempt < policy.maxAttempts {
                if let retryAfter = failure.retryAfter {
                    let wait = retryAfter.delay(from: dependencies.now())
                    if wait > policy.maxRetryAfter {
                        message += "; Retry-After asks for \(Freshness.format(wait.timeInterval)), more than the \(Freshness.format(policy.maxRetryAfter.timeInterval)) limit, so no retry"
                    } else {
                        delay = max(wait, .zero)
                    }
                } else {
                    delay = policy.delay(afterAttempt: attempt, random: dependencies.random.unitInterval())
                }
            }
            // The last failure ends the fetch in the same emission that shows it.
            let error = await fail(resource.collection, failure.code, message, status: failure.status, url: url, page: page, attempt: attempt, duration: failure.duration,
                                   ending: delay == nil ? fetch : nil)
            guard let delay else { throw error }
            do {
                try await dependencies.clock.sleep(for: delay)
            } catch {
                throw FetchError(.cancelled, "GET \(logged(url)) was cancelled while waiting to retry", url: logged(url))
            }
            attempt += 1
        }
    }

    /// One attempt: builds the request (default headers, token, validators), sends it, and on a
    /// 401 makes sure of a newer token (one renewal shared by concurrent 401s, see
    /// ``renewToken(after:)``) and sends once more with it; then classifies the answer.
    private func attemptOnce(_ resource: Resource, url: URL, validators: (etag: String?, lastModified: String?)) async -> Result<Outcome, AttemptFailure> {
        let conditional = validators.etag != nil || validators.lastModified != nil
        var answer: RedirectedResponse
        let sent: HTTPRequest
        switch await send(url: url, validators: validators) {
        case .success(let r): (answer, sent) = r
        case .failure(let f): return .failure(f)
        }
        // Only the credential origin's 401 renews the token: another origin never saw it.
        if answer.response.status == 401, !answer.leftOrigin, configuration.authentication != nil {
            do {
                try await renewToken(after: sent)
            } catch {
                return .failure(AttemptFailure(code: .httpStatus, message: "GET \(logged(url)) answered 401 and renewing the token failed: \(error)",
                                               status: 401, retryable: false, duration: answer.response.duration))
            }
            switch await send(url: url, validators: validators) {
            case .success(let r): answer = r.0
            case .failure(let f): return .failure(f)
            }
        }
        let response = answer.response
        let status = response.status
        // After redirects, name the URL that answered too: its origin may not be the request's.
        // Built only for a failure: a 2xx or a 304 needs no sentence (two URL redactions and
        // a status text per refresh).
        func describe() -> String {
            let answeredBy = response.url.absoluteString == url.absoluteString ? "" : " (redirected to \(logged(response.url)))"
            var text = "GET \(logged(url))\(answeredBy) answered \(status) \(HTTPURLResponse.localizedString(forStatusCode: status))"
            if let refusal = answer.refusal { text += " (\(refusal.message))" }
            return text
        }
        if status == 304 {
            guard conditional else {
                // RFC 9110 §15.4.5: 304 answers conditional requests only; there is nothing to keep.
                return .failure(AttemptFailure(code: .httpStatus, message: "\(describe()) to an unconditional request", status: 304, retryable: false, duration: response.duration))
            }
            return .success(.notModified(response))
        }
        guard (200..<300).contains(status) else {
            let retryable = status >= 500 || status == 408 || status == 429
            return .failure(AttemptFailure(code: .httpStatus, message: describe(), status: status, retryable: retryable,
                                           retryAfter: RetryAfter(headers: response.headers, now: dependencies.now()), duration: response.duration))
        }
        if let type = response.headers["Content-Type"], !Self.isJSON(type) {
            return .failure(AttemptFailure(code: .malformedBody, message: "GET \(logged(url)) answered \(type), not JSON", status: status, retryable: false, duration: response.duration))
        }
        do throws(RowExtraction.Failure) {
            return .success(.fetched(response, try RowExtraction.extract(response.body, for: resource)))
        } catch {
            return .failure(AttemptFailure(code: .malformedBody, message: "GET \(logged(url)): \(error.reason)", status: status, retryable: false, duration: response.duration))
        }
    }

    /// Sends one GET (redirects followed by ``exchange(_:)``); returns the answer and the request as sent.
    private func send(url: URL, validators: (etag: String?, lastModified: String?)) async -> Result<(RedirectedResponse, HTTPRequest), AttemptFailure> {
        var headers = defaultHeaders()
        if let etag = validators.etag { headers.set(name: "If-None-Match", value: etag) }
        if let lastModified = validators.lastModified { headers.set(name: "If-Modified-Since", value: lastModified) }
        do {
            try await authorize(&headers)
        } catch {
            return .failure(AttemptFailure(code: .transport, message: "GET \(logged(url)): the token provider failed: \(error)", retryable: false))
        }
        let request = HTTPRequest(method: .get, url: url, headers: headers, timeout: configuration.requestTimeout)
        do throws(TransportError) {
            return .success((try await exchange(request), request))
        } catch {
            let code: FetchError.Code = switch error.code {
            case .timedOut: .timedOut
            case .cannotConnect: .cannotConnect
            case .connectionLost: .connectionLost
            case .cancelled: .cancelled
            case .deadlineExceeded: .deadlineExceeded
            case .responseTooLarge: .responseTooLarge
            default: .transport
            }
            let cancelled = code == .cancelled || Task.isCancelled
            return .failure(AttemptFailure(code: cancelled ? .cancelled : code, message: "GET \(logged(url)) failed: \(error.message)",
                                           retryable: !cancelled && code != .transport && code != .responseTooLarge))
        }
    }

    /// Appends `fetchFailed` and returns the error to throw. `page`: the index of the page at
    /// `url` in a paged collection (nil for unpaged ones).
    private func fail(_ collection: String, _ code: FetchError.Code, _ message: String, status: Int?, url: URL, page: Int?, attempt: Int, duration: Duration?,
                      ending fetch: FetchInFlight? = nil) async -> FetchError {
        let event = Event.FetchFailed(url: logged(url), page: page, reason: code.rawValue, status: status, message: message, attempt: attempt,
                                      durationMicros: duration.map { Int64($0.timeInterval * 1_000_000) },
                                      readPolicy: ReadPolicy(freshness: freshnessPolicy(for: collection), retry: configuration.retry))
        do {
            let lsn = try await append([(collection, .fetchFailed(event))], onCommitted: ending(fetch, collection))
            return FetchError(code, message, status: status, url: logged(url), lsn: lsn)
        } catch {
            return FetchError(code, "\(message) (and recording the failure failed: \(error.message))", status: status, url: logged(url))
        }
    }

    /// The response's record; `url` is the request's URL as ``logged(_:)`` gives it.
    static func info(_ response: HTTPResponse, url: String) -> ResponseInfo {
        ResponseInfo(
            url: url, status: response.status,
            etag: response.headers["ETag"], lastModified: response.headers["Last-Modified"],
            cacheControl: response.headers.combinedValue(for: "Cache-Control"), date: response.headers["Date"],
            age: response.headers["Age"], expires: response.headers["Expires"],
            durationMicros: Int64(response.duration.timeInterval * 1_000_000), responseBytes: response.body.count, requestBytes: 0
        )
    }

    /// `application/json`, `text/json` or any `+json` media type (RFC 6839 §3.1).
    static func isJSON(_ contentType: String) -> Bool {
        // An ASCII value (every real header) is read byte by byte: Foundation's trimming and
        // lowercasing were 3% of refreshing a 1,000-row page (docs/performance.md, round 9).
        // Either way: the first non-empty part before a `;`, white space around it dropped.
        guard contentType.utf8.allSatisfy({ $0 < 0x80 }) else {
            let type = contentType.split(separator: ";", maxSplits: 1).first.map(String.init)?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            return type == "application/json" || type == "text/json" || type.hasSuffix("+json")
        }
        guard let first = contentType.utf8.split(separator: UInt8(ascii: ";"), maxSplits: 1).first else { return false }
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let start = first.firstIndex(where: { !blank($0) }), let end = first.lastIndex(where: { !blank($0) }) else { return false }
        let type = first[start...end].map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        return type.elementsEqual("application/json".utf8) || type.elementsEqual("text/json".utf8) || type.reversed().starts(with: "+json".utf8.reversed())
    }
}

extension Task where Success == Never, Failure == Never {
    /// `url` as it may be printed (redacted).
    static func checkCancellation(or url: String) throws(FetchError) {
        if Task.isCancelled { throw FetchError(.cancelled, "GET \(url) was cancelled", url: url) }
    }
}

/// Ends one refresh's in-flight mark (and its request's joinability) exactly once, from
/// whichever path gets there first.
final class FetchInFlight: Sendable {
    /// The shared request this fetch runs for.
    let request: UInt64
    private let ended = Atomic<Bool>(false)
    init(request: UInt64) { self.request = request }
    /// True for the first caller only.
    func end() -> Bool { !ended.exchange(true, ordering: .acquiringAndReleasing) }
}
