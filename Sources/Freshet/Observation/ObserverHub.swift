import Dispatch
import Synchronization

/// Delivers snapshots to observers. All deliveries run on one serial queue, in commit
/// order, so each observer sees snapshots in LSN order. Observers of the same collection
/// share one read per publication.
final class ObserverHub: Sendable {
    /// A class, so a delivery updates `last` in place: no dictionary write per observer per
    /// commit.
    private final class Subscriber: @unchecked Sendable {
        // @unchecked: `last` is read and written only on the hub's delivery queue.
        let buffer: SnapshotBuffer
        /// What the last snapshot sent showed, to skip emissions that would show the same.
        /// Shared by every observer the same delivery went to, and by observers whose
        /// deliveries showed exactly the same (see `deliver`).
        var last: Shown?
        /// What to run when the collection becomes stale by time (observe(resource): a
        /// refresh if the policy says so).
        let onStale: (@Sendable () -> Void)?

        init(buffer: SnapshotBuffer, onStale: (@Sendable () -> Void)?) {
            self.buffer = buffer
            self.onStale = onStale
        }
    }

    /// What a view sees in an emission, to skip deliveries that would show nothing new
    /// (docs/queries.md, "Emissions"): the rows, the pending overlay (and why any of it
    /// waits), the summary status and the query state.
    ///
    /// Rows are compared by the LSN of the last event that changed them (``SyncMark/rowsLSN``)
    /// and, when only other events came in between (a 304, a refetch of identical rows), by
    /// value. While a fetch is in flight only its start and end, row changes, pending changes
    /// and errors are transitions: the per-page renewal of `dataUpdatedAt`, `staleAt` and
    /// `isStale` during a paged revalidation shows with the fetch's end, in one emission.
    ///
    /// A class made once per delivery and shared by every observer it went to: storing it is
    /// one reference per observer, and observers that last saw the same one are compared with
    /// the new one once, not once each.
    private final class Shown: Sendable {
        let lsn: LSN
        let rowsLSN: LSN
        /// Rows held in memory only (`no-store`) change without a rows-changing event.
        let noStore: Bool
        let rows: [Row]
        let pending: [MutationID]
        let waiting: [MutationID: MutationWait]
        let status: Snapshot.Status
        let query: QueryState

        init(_ s: Snapshot) {
            lsn = s.lsn
            rowsLSN = s.syncMark?.rowsLSN ?? .zero
            noStore = s.syncMark?.noStore ?? false
            rows = s.rows
            pending = s.pendingMutations
            waiting = s.waitingMutations
            status = s.status
            query = s.query
        }

        /// Whether two sets of waits show the same: the same mutations wait for the same
        /// reasons (see ``MutationWait/showsSame(as:)``); a new backoff delay is not news.
        static func sameWaits(_ a: [MutationID: MutationWait], _ b: [MutationID: MutationWait]) -> Bool {
            a.count == b.count && a.allSatisfy { id, wait in b[id].map { wait.showsSame(as: $0) } ?? false }
        }

        /// Whether `other` holds exactly what this one holds (rows compared last, only when
        /// everything else is equal).
        func hasSameContent(as other: Shown) -> Bool {
            lsn == other.lsn && rowsLSN == other.rowsLSN && noStore == other.noStore && pending == other.pending
                && waiting == other.waiting && status == other.status && query == other.query && rows == other.rows
        }

        /// Whether `next` shows the same as this one.
        func showsSame(as next: Shown) -> Bool {
            guard pending == next.pending, Self.sameWaits(waiting, next.waiting), status == next.status,
                  query.data == next.query.data, query.fetch == next.query.fetch, query.error == next.query.error,
                  query.hasMore == next.query.hasMore else { return false }
            if query.fetch != .fetching {
                guard query.isStale == next.query.isStale, query.staleAt == next.query.staleAt,
                      query.dataUpdatedAt == next.query.dataUpdatedAt, query.failureCount == next.query.failureCount else { return false }
            }
            if lsn == next.lsn { return true }
            // Same rows-changing event and no rows held in memory only: the same rows.
            if rowsLSN == next.rowsLSN, rowsLSN != .zero, pending.isEmpty, !noStore, !next.noStore { return true }
            return rows == next.rows
        }
    }

    private let queue = DispatchQueue(label: "freshet.observers", qos: .userInitiated)
    private let subscribers = Mutex<[String: [UInt64: Subscriber]]>([:])
    private let nextID = Atomic<UInt64>(0)
    /// Snapshots sent to observers since the hub was made, all observers together (for tests).
    private let emitted = Atomic<Int>(0)
    /// Comparisons of what an observer last saw with a new delivery, since the hub was made
    /// (for tests: one per distinct `last`, not one per observer).
    private let comparisons = Atomic<Int>(0)
    private let read: @Sendable (String) throws -> Snapshot
    /// Told of every snapshot read for observers (the staleness timer).
    private let delivered: @Sendable (String, Snapshot) -> Void
    /// Told when a collection's last observation ends (garbage collection's clock starts).
    private let unobserved: @Sendable (String) -> Void

    init(read: @escaping @Sendable (String) throws -> Snapshot, delivered: @escaping @Sendable (String, Snapshot) -> Void = { _, _ in },
         unobserved: @escaping @Sendable (String) -> Void = { _ in }) {
        self.read = read
        self.delivered = delivered
        self.unobserved = unobserved
    }

    /// `afterFirst` runs on the delivery queue once the first snapshot is sent, so work it
    /// starts (a background refresh) cannot overtake the stored state. It is given that
    /// snapshot (nil when the read failed), so it can judge what the observer was shown
    /// rather than whatever the store holds by the time a task it starts runs.
    /// `onStale` runs on the delivery queue when the collection becomes stale by time while
    /// this observer is subscribed (see ``becameStale(_:)``).
    func subscribe(_ collection: String, afterFirst: (@Sendable (Snapshot?) -> Void)? = nil, onStale: (@Sendable () -> Void)? = nil) -> CollectionObservation {
        let id = nextID.add(1, ordering: .relaxed).newValue
        // The buffer keeps the first snapshot until it is read (see SnapshotBuffer): a
        // refresh that `afterFirst` starts cannot replace it with `refreshing`.
        let buffer = SnapshotBuffer { [weak self] in
            guard let self else { return }
            let last = self.subscribers.withLock { s -> Bool in
                guard s[collection]?.removeValue(forKey: id) != nil, s[collection]?.isEmpty == true else { return false }
                s[collection] = nil
                return true
            }
            if last { self.unobserved(collection) }
        }
        // Registering and the first read happen on the delivery queue, so a commit is
        // either already visible to the first read or delivered after it — never lost.
        queue.async {
            // An observation dropped before it was registered has nobody to deliver to.
            guard !buffer.hasEnded else { return }
            self.subscribers.withLock { $0[collection, default: [:]][id] = Subscriber(buffer: buffer, onStale: onStale) }
            let first = self.deliver(collection)
            afterFirst?(first)
        }
        return CollectionObservation(lifetime: ObservationLifetime(buffer))
    }

    /// Reads each collection once and sends it to its observers, after a commit or a status change.
    func publish(_ collections: some Sequence<String> & Sendable) {
        // Nobody observes them: the delivery would read nothing, so the delivery queue is not
        // woken at all (three wake-ups of another thread per refresh of an unobserved
        // collection; docs/performance.md, round 10). An observer registering meanwhile does
        // so on the queue, and its first read comes after this change.
        guard subscribers.withLock({ s in collections.contains { !(s[$0]?.isEmpty ?? true) } }) else { return }
        queue.async {
            for collection in collections { self.deliver(collection) }
        }
    }

    /// `collections` reached their `staleAt`: their observers get the stale snapshot, and the
    /// first observer with an `onStale` action (an `observe(resource)`) runs it, once.
    func becameStale(_ collections: [String]) {
        queue.async {
            for collection in collections {
                self.deliver(collection)
                let action = self.subscribers.withLock { $0[collection]?.values.lazy.compactMap(\.onStale).first }
                action?()
            }
        }
    }

    var observedCollections: Set<String> {
        subscribers.withLock { Set($0.filter { !$0.value.isEmpty }.keys) }
    }

    /// How many snapshots were sent, once every delivery asked for so far has run (for tests:
    /// a consumer slower than the commits reads fewer).
    func emissionCount() -> Int {
        queue.sync { emitted.load(ordering: .relaxed) }
    }

    /// How many times a delivery compared what observers last saw with what it shows, once
    /// every delivery asked for so far has run (for tests: observers that saw the same share
    /// one comparison).
    func comparisonCount() -> Int {
        queue.sync { comparisons.load(ordering: .relaxed) }
    }

    /// How many observers `collection` has, once every subscription asked for so far is
    /// registered (for tests: a released model's observation is gone).
    func observerCount(_ collection: String) -> Int {
        queue.sync { subscribers.withLock { $0[collection]?.count ?? 0 } }
    }

    /// Ends every observation (the store is closing).
    func finishAll() {
        queue.sync {
            let all = subscribers.withLock { s -> [Subscriber] in
                defer { s = [:] }
                return s.values.flatMap { $0.values }
            }
            for s in all { s.buffer.finish() }
        }
    }

    /// Reads `collection` once and sends it to the observers it is news to; returns the
    /// snapshot read (nil when nobody observes it or the read failed).
    @discardableResult
    private func deliver(_ collection: String) -> Snapshot? {
        let targets = subscribers.withLock { $0[collection] ?? [:] }
        guard !targets.isEmpty else { return nil }
        let snapshot: Snapshot
        do {
            snapshot = try read(collection)
        } catch {
            for (_, s) in targets { s.buffer.finish(throwing: error) }
            return nil
        }
        delivered(collection, snapshot)
        let shown = Shown(snapshot)
        // The SyncMark an observer was shown is gone: garbage collection evicted the
        // collection (here, in a race with this observation starting, or in another process).
        let evicted = snapshot.syncMark == nil && targets.values.contains { ($0.last?.lsn ?? .zero) != .zero }
        // One comparison per distinct `last` (usually one for all observers); the first
        // verdict is kept without a dictionary.
        var firstVerdict: (last: Shown, same: Bool)?
        var otherVerdicts: [ObjectIdentifier: (last: Shown, same: Bool)] = [:]
        // What the observers sent this snapshot store as `last`: an earlier `Shown` with
        // exactly the same content, when a target holds one, so observers that subscribed one
        // after another keep sharing one object. Otherwise each first delivery made its own,
        // and the next commit compared rows once per observer (W4, 1,000 observers × 100
        // rows: 13 ms at the first commit; docs/performance.md, round 4). Equal content
        // compares equally with anything, so what is emitted does not change.
        var stored = shown
        func same(_ last: Shown) -> Bool {
            if let v = firstVerdict, v.last === last { return v.same }
            if let v = otherVerdicts[ObjectIdentifier(last)] { return v.same }
            let same = last.showsSame(as: shown)
            comparisons.add(1, ordering: .relaxed)
            if same, stored === shown, last.hasSameContent(as: shown) { stored = last }
            if firstVerdict == nil { firstVerdict = (last, same) } else { otherVerdicts[ObjectIdentifier(last)] = (last, same) }
            return same
        }
        // Verdicts first (they may find `stored`), then the sends.
        for s in targets.values { if let last = s.last { _ = same(last) } }
        var sent = 0
        for s in targets.values {
            if let last = s.last, same(last) { continue }
            s.buffer.yield(snapshot)
            s.last = stored
            sent += 1
        }
        if sent > 0 { emitted.add(sent, ordering: .relaxed) }
        // An `observe(resource)` refetches it, as it would on a first observation of an empty key.
        if evicted, let refetch = targets.values.lazy.compactMap(\.onStale).first { refetch() }
        return snapshot
    }
}
