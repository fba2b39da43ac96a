import Synchronization

/// A barrier that holds scripted requests until the test releases it: the way to make a
/// response arrive exactly when a test wants, e.g. to check what observers see while a
/// refresh is in flight, or to make two responses arrive in a chosen order.
///
/// ```swift
/// let gate = Gate()
/// transport.on("/items", reply: .held(gate, then: .json("[]")))
/// let refresh = Task { try await store.refresh(items) }
/// await gate.waitUntilReached()   // the request is now waiting at the gate
/// // ... assert the `refreshing` state ...
/// gate.release()                  // the response goes out
/// ```
///
/// A gate starts closed. ``release()`` opens it for good: every request held at it goes on
/// (in the order they arrived) and later requests pass without stopping. A request held at a
/// gate whose task is cancelled stops waiting and fails with `TransportError.cancelled`.
/// One gate may be used by several replies and several transports.
public final class Gate: Sendable {
    private let state = Mutex(State())

    /// A closed gate.
    public init() {}

    /// Whether ``release()`` has been called.
    public var isReleased: Bool {
        state.withLock { $0.isReleased }
    }

    /// How many requests have arrived at the gate since it was created, whether they are
    /// still held, went through, or were cancelled.
    public var reachedCount: Int {
        state.withLock { $0.reached }
    }

    /// How many requests are held at the gate right now.
    public var waitingCount: Int {
        state.withLock { $0.held.count }
    }

    /// Opens the gate: the requests held at it go on, in the order they arrived, and later
    /// ones pass straight through. Calling it again does nothing.
    public func release() {
        let held = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.isReleased = true
            defer { state.held.removeAll() }
            return state.held.map(\.continuation)
        }
        for continuation in held { continuation.resume(returning: true) }
    }

    /// Suspends until at least `count` requests have reached the gate (``reachedCount`` is
    /// `count` or more); returns at once when they already have. While the gate is closed, a
    /// request that has reached it is held there, so after this returns the test can look at
    /// the in-flight state and then ``release()``.
    ///
    /// Woken by the arriving requests, never by polling. Returns early, without an error,
    /// when the calling task is cancelled.
    public func waitUntilReached(_ count: Int = 1) async {
        let id = state.withLock { $0.makeID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.reached >= count || Task.isCancelled { return true }
                    state.reachWaiters.append(ReachWaiter(id: id, count: count, continuation: continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let index = state.reachWaiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.reachWaiters.remove(at: index).continuation
            }
            continuation?.resume()
        }
    }

    /// Arrives at the gate and waits until it is open.
    ///
    /// - Returns: `true` once the gate is open, `false` when the calling task was cancelled
    ///   first.
    func pass() async -> Bool {
        let id = state.withLock { $0.makeID() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                // Cancellation sets the task's flag before it runs the handler, so either the
                // handler finds this request held, or the flag is already set here.
                let (outcome, reachWaiters) = state.withLock { state -> (Bool?, [CheckedContinuation<Void, Never>]) in
                    state.reached += 1
                    let satisfied = state.takeSatisfiedReachWaiters()
                    if state.isReleased { return (true, satisfied) }
                    if Task.isCancelled { return (false, satisfied) }
                    state.held.append(Held(id: id, continuation: continuation))
                    return (nil, satisfied)
                }
                for waiter in reachWaiters { waiter.resume() }
                if let outcome { continuation.resume(returning: outcome) }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                guard let index = state.held.firstIndex(where: { $0.id == id }) else { return nil }
                return state.held.remove(at: index).continuation
            }
            continuation?.resume(returning: false)
        }
    }

    private struct Held {
        let id: UInt64
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct ReachWaiter {
        let id: UInt64
        let count: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var isReleased = false
        var reached = 0
        var lastID: UInt64 = 0
        /// Requests held at the closed gate, in arrival order.
        var held: [Held] = []
        /// Tasks in `waitUntilReached`, in call order.
        var reachWaiters: [ReachWaiter] = []

        mutating func makeID() -> UInt64 {
            lastID += 1
            return lastID
        }

        mutating func takeSatisfiedReachWaiters() -> [CheckedContinuation<Void, Never>] {
            let satisfied = reachWaiters.filter { $0.count <= reached }.map(\.continuation)
            reachWaiters.removeAll { $0.count <= reached }
            return satisfied
        }
    }
}
