import Foundation
import Synchronization

/// Sends pending mutations: per queue one at a time, in LSN order, each until the server
/// confirms or rejects it. Triggers (open, a new mutation, reachability, foreground, the
/// backoff timer) only wake the one drain loop of a queue, so several at once still send each
/// mutation once. The queue's content is the log's `pending` entries, never a copy.
final class MutationQueue: Sendable {
    private struct QueueState: Sendable {
        var running = false
        var rerun = false
        var sleeper: Task<Void, Never>?
        var attempts: [MutationID: Int] = [:]
        var lastError: [MutationID: String] = [:]
    }

    /// What one send attempt came to.
    enum Step: Sendable {
        /// Confirmed or rolled back: go on with the next mutation.
        case resolved
        /// Not sent or not answered (offline, 5xx, 408, 429): try again after the delay.
        case retry(after: Duration, error: String)
        /// Not sent for a local reason that no timer can change (no base URL, a request that
        /// cannot be built, credentials the server refuses): the mutation stays pending and
        /// the queue idles until the next trigger.
        case wait
        /// The store closed.
        case stop
    }

    private let queues = Mutex<[String: QueueState]>([:])
    private let isStopped = Atomic<Bool>(false)
    /// Sends the first pending mutation of a queue (or reports none with nil).
    private let sendFirst: @Sendable (String, Int) async -> Step?
    private let clock: any Clock<Duration>

    init(clock: any Clock<Duration>, sendFirst: @escaping @Sendable (_ queue: String, _ attempt: Int) async -> Step?) {
        self.clock = clock
        self.sendFirst = sendFirst
    }

    /// Wakes `queue`: starts its drain loop, or makes the running one look again at once
    /// (cutting a backoff sleep short).
    func kick(_ queue: String) {
        guard !isStopped.load(ordering: .acquiring) else { return }
        let start = queues.withLock { q -> Bool in
            var s = q[queue] ?? QueueState()
            defer { q[queue] = s }
            if s.running {
                s.rerun = true
                s.sleeper?.cancel()
                return false
            }
            s.running = true
            return true
        }
        if start { Task { await self.drain(queue) } }
    }

    func stop() {
        isStopped.store(true, ordering: .releasing)
        queues.withLock { q in for (_, s) in q { s.sleeper?.cancel() } }
    }

    /// Attempts made so far in this process and the last error, by mutation.
    func progress(_ id: MutationID, queue: String) -> (attempts: Int, lastError: String?) {
        queues.withLock { ($0[queue]?.attempts[id] ?? 0, $0[queue]?.lastError[id]) }
    }

    func recordAttempt(_ id: MutationID, queue: String, error: String?) {
        queues.withLock { q in
            q[queue, default: QueueState()].attempts[id, default: 0] += 1
            q[queue, default: QueueState()].lastError[id] = error
        }
    }

    private func drain(_ queue: String) async {
        var attempt = 1
        while !isStopped.load(ordering: .acquiring) {
            switch await sendFirst(queue, attempt) {
            case nil, .wait?:
                // Empty, or held for a local reason: idle until a trigger (one that came
                // during this attempt makes the loop look again now).
                let again = queues.withLock { q -> Bool in
                    if q[queue]?.rerun == true {
                        q[queue]?.rerun = false
                        return true
                    }
                    q[queue]?.running = false
                    return false
                }
                if again { continue }
                return
            case .resolved?:
                attempt = 1
            case .stop?:
                queues.withLock { $0[queue]?.running = false }
                return
            case .retry(let delay, _)?:
                attempt += 1
                let clock = self.clock
                let sleeper = Task {
                    do {
                        try await clock.sleep(for: delay)
                    } catch {
                        // Cancelled by a trigger (or by close): look again at once.
                    }
                }
                let cutShort = queues.withLock { q -> Bool in
                    if q[queue]?.rerun == true {
                        q[queue]?.rerun = false
                        return true
                    }
                    q[queue]?.sleeper = sleeper
                    return false
                }
                // A trigger, or a close that came before the sleeper was recorded, ends it now.
                if cutShort || isStopped.load(ordering: .acquiring) { sleeper.cancel() }
                await sleeper.value
                queues.withLock { q in
                    q[queue]?.sleeper = nil
                    q[queue]?.rerun = false
                }
            }
        }
        queues.withLock { $0[queue]?.running = false }
    }
}
