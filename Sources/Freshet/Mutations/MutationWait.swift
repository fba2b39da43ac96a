import Foundation

/// Why a pending mutation is still pending: it could not be sent, or was not answered, for a
/// reason that may pass. Only the server may reject a mutation, so none of these ever rolls
/// one back; the mutation keeps its place in its queue (the ones after it in the same queue
/// wait behind it, since they may depend on it) and is tried again.
///
/// Read it from ``PendingMutation/waiting``, ``QueuedMutation/waiting`` and
/// ``Snapshot/waitingMutations``. It lives in memory: a relaunch starts without one and
/// tries the queue again.
///
/// ```swift
/// // A Configuration without baseURL cannot send "/todos/2":
/// if let wait = try store.snapshot("todos").waitingMutations[pending.id] {
///     print(wait)   // noBaseURL: DELETE /todos/2 is a relative path and the configuration has no baseURL; …
/// }
/// ```
public struct MutationWait: Sendable, Hashable, CustomStringConvertible {
    /// What kind of local reason holds the mutation.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The request path is relative and ``Configuration/baseURL`` is nil. Tried again at
        /// the next open (with a configuration that has a base URL) or trigger.
        public static let noBaseURL = Code(rawValue: "noBaseURL")
        /// The request cannot be built with this configuration (its path does not make an
        /// http(s) URL). Tried again at the next open or trigger.
        public static let invalidRequest = Code(rawValue: "invalidRequest")
        /// The server answered 401 (or 407) and no ``Configuration/authentication`` is set, or
        /// the renewed token was refused too. The server has not judged the mutation, only
        /// the credentials. Tried again at the next open or trigger (for example
        /// ``Store/sendPendingMutations()`` after a sign-in), never on a timer, so a refused
        /// token does not start a renewal loop.
        public static let unauthorized = Code(rawValue: "unauthorized")
        /// Not sent or not answered for a reason that usually passes by itself: offline, a
        /// timeout, a lost connection, 5xx, 408, 429, or a token provider that threw. Tried
        /// again after the backoff of ``Configuration/RetryPolicy`` (or at once on a trigger).
        public static let retrying = Code(rawValue: "retrying")
        /// The outcome could not be appended (map full, storage error). Tried again at the next
        /// open or trigger.
        public static let storage = Code(rawValue: "storage")
        /// This store does not send mutations: it was opened read-only (`create: false`) or
        /// with ``Configuration/sendsMutations`` false. A store that sends them will.
        public static let notSending = Code(rawValue: "notSending")
    }

    /// When the queue tries the mutation again.
    public enum Retry: Sendable, Hashable {
        /// After this delay (backoff or `Retry-After`), or at once on a trigger.
        case after(Duration)
        /// On the next trigger only: store open, a new mutation in the same queue,
        /// ``Store/didBecomeActive()``, ``Store/networkDidBecomeReachable()``,
        /// ``Store/sendPendingMutations()``.
        case onTrigger
    }

    public let code: Code
    /// One line for a person, naming the request and what is missing.
    public let message: String
    public let retry: Retry

    public init(_ code: Code, _ message: String, retry: Retry) {
        self.code = code
        self.message = message
        self.retry = retry
    }

    /// Whether a view shows `other` as it shows this wait: the same code and message, and
    /// both retried on a timer or both on a trigger. The delay of a timed retry is not
    /// compared: it changes with every backoff step of an offline mutation, and an observer
    /// is not sent a snapshot per retry for it (the snapshot it gets next carries the
    /// current delay). docs/queries.md, "Emissions".
    public func showsSame(as other: MutationWait) -> Bool {
        guard code == other.code, message == other.message else { return false }
        switch (retry, other.retry) {
        case (.after, .after), (.onTrigger, .onTrigger): return true
        default: return false
        }
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}
