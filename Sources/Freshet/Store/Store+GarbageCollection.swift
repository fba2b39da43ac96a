import Foundation
import FreshetLMDB

extension Store {
    /// The gc time that applies to `collection`: its resource's (once the store knows it in
    /// this process), else ``Configuration/gcTime``; nil when it is never evicted.
    public func gcTime(for collection: String) -> Duration? {
        (refreshes.resource(for: collection)?.gcTime ?? configuration.gcTime).duration
    }

    /// Runs one garbage-collection pass now — what the collector's timer does when a
    /// collection may have come due — and returns the collections it evicted, sorted.
    ///
    /// A collection is evicted when all of these hold: it was fetched (its SyncMark records a
    /// fetch attempt; local-only collections are never evicted), no unresolved mutation names
    /// it, nobody in this process observes it, no refresh of it is in flight, its gc time
    /// (``gcTime(for:)``) is not ``GCTime/never``, and it has not been used for that long —
    /// used meaning an observation of it ended, ``snapshot(_:)`` read it, a commit touched it
    /// or (from its SyncMark, whichever process made it) a fetch was attempted; a collection
    /// not used since the store opened counts from the open. All of the
    /// pass's evictions are appended as one batch (one `evicted` event per collection, one
    /// transaction); the fold removes each collection's rows and SyncMark (docs/queries.md,
    /// "Garbage collection"). The collector's timer is then set for the next collection to
    /// come due.
    ///
    /// - Returns: the evicted collections, sorted (empty on a read-only store, which cannot
    ///   append).
    /// - Throws: ``StoreError/closed``; ``StoreError/corruptRecord`` or ``StoreError/storage``
    ///   when the store cannot be read; what ``append(_:)`` throws (nothing was evicted then).
    @discardableResult
    public func collectGarbage() async throws(StoreError) -> [String] {
        try checkOpen()
        guard !isReadOnly else { return [] }
        let now = dependencies.now()
        let usage = garbageCollector.usage
        let observed = hub.observedCollections
        let stored = try readGarbageCollectionCandidates()
        var due: [(collection: String, event: Event)] = []
        var next: Date?
        for (collection, mark) in stored.marks {
            guard mark.wasFetched, !stored.pending.contains(collection), !observed.contains(collection),
                  !refreshes.isFetching(collection), let gc = gcTime(for: collection) else { continue }
            // The last fetch attempt counts as a use too, whichever process made it (this one
            // may not have seen another process's commit yet).
            let since = max(usage.lastUsed[collection] ?? usage.openedAt, mark.lastAttemptAt ?? .distantPast)
            let deadline = since.addingTimeInterval(gc.timeInterval)
            if deadline <= now {
                let unobserved = Event.Evicted(unobservedMicros: max(0, ByteWriter.micros(now) - ByteWriter.micros(since)), gcTimeMicros: ReadPolicy.micros(gc))
                due.append((collection, .evicted(unobserved)))
            } else {
                next = min(next ?? deadline, deadline)
            }
        }
        garbageCollector.forget(allBut: Set(stored.marks.map(\.0)).subtracting(due.map(\.collection)), usedBefore: now)
        garbageCollector.schedule(next)
        guard !due.isEmpty else { return [] }
        try await append(due)
        for (collection, _) in due { refreshes.clearVolatile(collection) }
        return due.map(\.collection)
    }

    /// Every collection's SyncMark, and the collections unresolved mutations name, from one
    /// read transaction.
    private func readGarbageCollectionCandidates() throws(StoreError) -> (marks: [(String, SyncMark)], pending: Set<String>) {
        do {
            return try env.read { txn in
                var marks: [(String, SyncMark)] = []
                var failure: (any Error)?
                let stamps = try MarkStamps.read(state.dbs.meta, in: txn)
                try txn.forEach(state.dbs.marks) { key, value in
                    let name = String(decoding: key, as: UTF8.self)
                    do {
                        marks.append((name, stamps.applied(to: try SyncMark.decode(Array(value)), name: Array(key))))
                    } catch {
                        failure = StoreError(.corruptRecord, "SyncMark of \(name): \(error)")
                        return false
                    }
                    return true
                }
                if let failure { throw failure }
                return (marks, try Fold.collectionsNamedByPendingMutations(state: state, in: txn))
            }
        } catch {
            throw StoreError(error, doing: "reading \(directory.path) for garbage collection")
        }
    }

    /// The collector's timer fired: a pass in the background; a failure is left for the next
    /// pass (the collections stay, and their snapshots report an unreadable store).
    func collectGarbageInBackground() {
        Task {
            do {
                try await self.collectGarbage()
            } catch {
                // Nothing was evicted; the next use of a collection sets the timer again.
            }
            self.garbageCollector.passEnded()
        }
    }
}
