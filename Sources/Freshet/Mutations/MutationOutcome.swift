import Synchronization

/// How a confirmed mutation ended. A confirmation is final, as is a rollback (a
/// ``MutationError`` thrown by ``PendingMutation/outcome()``); see docs/mutations.md.
public struct MutationOutcome: Sendable, Hashable {
    /// How the server's answer confirms the mutation.
    public enum Kind: Sendable, Hashable {
        /// A 2xx: the server applied the request, or (replaying its `Idempotency-Key` after a
        /// lost response) answered as it did the first time.
        case applied
        /// A `DELETE` answered 404 or 410: the server has no such resource, which is the
        /// state the delete asked for. DELETE is idempotent (RFC 9110 §9.2.2): a 404
        /// (§15.5.5) or 410 (§15.5.11) is what a retried delete gets once an earlier attempt
        /// succeeded, or once someone else deleted the row. The row stays deleted.
        case alreadyGone
    }

    public var id: MutationID
    /// The server's HTTP status (a 2xx, or 404 / 410 for ``Kind/alreadyGone``).
    public var status: Int
    /// See ``Kind``.
    public var kind: Kind = .applied
    /// The server's rows folded into the base state.
    public var rows: [Row]
    /// The ID the server gave the provisional row, when it differs.
    public var serverID: String?
    /// The LSN of the `mutationConfirmed` event.
    public var lsn: LSN
}

/// A mutation whose `mutationProposed` event is committed; the queue sends it.
public struct PendingMutation: Sendable, Hashable {
    public let id: MutationID
    /// The LSN of its `mutationProposed` event.
    public let lsn: LSN
    let board: OutcomeBoard

    /// Waits until the server confirms or rejects the mutation. Offline, or while the
    /// mutation cannot be sent for any other local reason (see ``waiting``), this waits until
    /// the queue gets through; cancelling the wait leaves the mutation queued. Only a server
    /// answer ends it: a confirmation, or a rollback after a 4xx.
    /// - Throws: ``MutationError`` — `rejected`, `dependencyRolledBack`,
    ///   `malformedConfirmation` (confirmed, but no usable row), `cancelled` (the wait), or
    ///   `storage` when the store closes first (the mutation stays queued).
    public func outcome() async throws(MutationError) -> MutationOutcome {
        try await board.wait(for: id).get()
    }

    /// Why the mutation is still pending: what the last attempt to send it ran into (no base
    /// URL, offline, 5xx, …); nil before the first attempt, and once it is resolved. Only
    /// kept in memory by the store that tried. See ``MutationWait``.
    public var waiting: MutationWait? { board.waiting(id) }

    public static func == (a: Self, b: Self) -> Bool { a.id == b.id && a.lsn == b.lsn }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// Outcomes of mutations proposed in this process, and the tasks waiting for them.
final class OutcomeBoard: Sendable {
    typealias Outcome = Result<MutationOutcome, MutationError>
    private enum Entry {
        case waiting([UInt64: CheckedContinuation<Outcome, Never>])
        case done(Outcome)
    }
    private let entries = Mutex<[MutationID: Entry]>([:])
    private let waits = Mutex<[MutationID: MutationWait]>([:])
    private let nextToken = Atomic<UInt64>(0)

    /// Records why `id` is still pending (nil: it is not held). Returns whether that changed.
    @discardableResult
    func setWaiting(_ id: MutationID, _ wait: MutationWait?) -> Bool {
        waits.withLock { w in
            guard w[id] != wait else { return false }
            w[id] = wait
            return true
        }
    }

    func waiting(_ id: MutationID) -> MutationWait? {
        waits.withLock { $0[id] }
    }

    func expect(_ id: MutationID) {
        entries.withLock { e in if e[id] == nil { e[id] = .waiting([:]) } }
    }

    func resolve(_ id: MutationID, with outcome: Outcome) {
        setWaiting(id, nil)
        let waiting = entries.withLock { e -> [CheckedContinuation<Outcome, Never>] in
            defer { e[id] = .done(outcome) }
            if case .waiting(let w) = e[id] { return Array(w.values) }
            return []
        }
        for c in waiting { c.resume(returning: outcome) }
    }

    /// Answers every waiting task with `error` (the store is closing).
    func failAll(_ error: MutationError) {
        let waiting = entries.withLock { e -> [(MutationID, CheckedContinuation<Outcome, Never>)] in
            var all: [(MutationID, CheckedContinuation<Outcome, Never>)] = []
            for (id, entry) in e {
                if case .waiting(let w) = entry {
                    all += w.values.map { (id, $0) }
                    e[id] = .done(.failure(error))
                }
            }
            return all
        }
        for (id, c) in waiting {
            c.resume(returning: .failure(MutationError(error.code, error.message, mutationID: id)))
        }
    }

    func wait(for id: MutationID) async -> Outcome {
        let token = nextToken.add(1, ordering: .relaxed).newValue
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Outcome, Never>) in
                let immediate = entries.withLock { e -> Outcome? in
                    if Task.isCancelled { return .failure(MutationError(.cancelled, "stopped waiting for mutation \(id); it stays queued", mutationID: id)) }
                    switch e[id] {
                    case .done(let outcome): return outcome
                    case .waiting(var w):
                        w[token] = c
                        e[id] = .waiting(w)
                        return nil
                    case nil:
                        e[id] = .waiting([token: c])
                        return nil
                    }
                }
                if let immediate { c.resume(returning: immediate) }
            }
        } onCancel: {
            let c = entries.withLock { e -> CheckedContinuation<Outcome, Never>? in
                guard case .waiting(var w) = e[id], let c = w.removeValue(forKey: token) else { return nil }
                e[id] = .waiting(w)
                return c
            }
            c?.resume(returning: .failure(MutationError(.cancelled, "stopped waiting for mutation \(id); it stays queued", mutationID: id)))
        }
    }
}
