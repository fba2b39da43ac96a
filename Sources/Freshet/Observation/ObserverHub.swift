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
        var last: Shown?

        init(buffer: SnapshotBuffer) { self.buffer = buffer }
    }

    /// What distinguishes one emission from the next: the commit it reflects (the
    /// collection's last LSN), its pending overlay (and why any of it waits) and its status. Deliveries that would repeat
    /// the last one sent (a status publication that finds nothing new) are skipped, so every
    /// commit that touches the collection is seen once and a 304 differs from the stored
    /// rows only in its LSN and status.
    private struct Shown: Sendable, Equatable {
        var lsn: LSN
        var pending: [MutationID]
        var waiting: [MutationID: MutationWait]
        var status: Snapshot.Status

        init(_ s: Snapshot) {
            lsn = s.lsn
            pending = s.pendingMutations
            waiting = s.waitingMutations
            status = s.status
        }
    }

    private let queue = DispatchQueue(label: "freshet.observers", qos: .userInitiated)
    private let subscribers = Mutex<[String: [UInt64: Subscriber]]>([:])
    private let nextID = Atomic<UInt64>(0)
    private let read: @Sendable (String) throws -> Snapshot

    init(read: @escaping @Sendable (String) throws -> Snapshot) {
        self.read = read
    }

    /// `afterFirst` runs on the delivery queue once the first snapshot is sent, so work it
    /// starts (a background refresh) cannot overtake the stored state.
    func subscribe(_ collection: String, afterFirst: (@Sendable () -> Void)? = nil) -> Observation {
        let id = nextID.add(1, ordering: .relaxed).newValue
        // The buffer keeps the first snapshot until it is read (see SnapshotBuffer): a
        // refresh that `afterFirst` starts cannot replace it with `refreshing`.
        let buffer = SnapshotBuffer { [weak self] in
            guard let self else { return }
            _ = self.subscribers.withLock { $0[collection]?.removeValue(forKey: id) }
        }
        // Registering and the first read happen on the delivery queue, so a commit is
        // either already visible to the first read or delivered after it — never lost.
        queue.async {
            // An observation dropped before it was registered has nobody to deliver to.
            guard !buffer.hasEnded else { return }
            self.subscribers.withLock { $0[collection, default: [:]][id] = Subscriber(buffer: buffer) }
            self.deliver(collection)
            afterFirst?()
        }
        return Observation(lifetime: ObservationLifetime(buffer))
    }

    /// Reads each collection once and sends it to its observers, after a commit or a status change.
    func publish(_ collections: some Sequence<String> & Sendable) {
        queue.async {
            for collection in collections { self.deliver(collection) }
        }
    }

    var observedCollections: Set<String> {
        subscribers.withLock { Set($0.filter { !$0.value.isEmpty }.keys) }
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

    private func deliver(_ collection: String) {
        let targets = subscribers.withLock { $0[collection] ?? [:] }
        guard !targets.isEmpty else { return }
        let snapshot: Snapshot
        do {
            snapshot = try read(collection)
        } catch {
            for (_, s) in targets { s.buffer.finish(throwing: error) }
            return
        }
        let shown = Shown(snapshot)
        for s in targets.values {
            if let last = s.last, last == shown { continue }
            s.buffer.yield(snapshot)
            s.last = shown
        }
    }
}
