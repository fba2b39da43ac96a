import Foundation
import FreshetHTTP
import Synchronization

/// An ``HTTPTransport`` that answers from a script instead of the network, and records every
/// request it gets: the test stand-in for `URLSessionTransport` in `Dependencies.transport`.
///
/// ```swift
/// let clock = TestClock()
/// let transport = ScriptedTransport(clock: clock)
/// transport.on("/api/v2/pokemon?limit=20&offset=0",
///              reply: .status(503), .json(#"{"results": []}"#))
/// transport.on(.post, "/api/v2/favourites", reply: .status(201))
/// // ... run the code under test ...
/// #expect(transport.requests.map(\.description) == [
///     "GET /api/v2/pokemon?limit=20&offset=0",
///     "GET /api/v2/pokemon?limit=20&offset=0",
/// ])
/// ```
///
/// Routing: each request goes to the most recently declared route that matches it, so a
/// later ``on(_:_:reply:)`` for the same path replaces an earlier one (the server "changes
/// its mind" mid-test). A route's replies are used in order, one per request it matched, and
/// the last one repeats for every request after that. A request that no route matches throws
/// `TransportError` with code `.other` and a message naming the request and the routes.
///
/// Cancellation: a request from a task that is already cancelled, or that is cancelled while
/// held at a ``Gate``, throws `TransportError` with code `.cancelled`; it is recorded but
/// uses up none of its route's replies when cancelled before it arrives.
///
/// All methods may be called from any task; the script and the record are guarded by a lock.
public final class ScriptedTransport: HTTPTransport, Sendable {
    /// The clock whose time is stamped on each ``Recorded`` request, or `nil`.
    public let clock: TestClock?

    private let state = Mutex(State())

    /// An empty script: every request fails as unmatched until routes are declared.
    ///
    /// - Parameter clock: When given, each recorded request carries the clock's instant and
    ///   date at its arrival.
    public init(clock: TestClock? = nil) {
        self.clock = clock
    }

    /// Declares the replies to `GET` requests whose URL path and query are `path`; see
    /// ``on(_:_:reply:)``.
    ///
    /// An empty `reply` list is a programmer error and stops the program.
    public func on(_ path: String, reply: Reply...) {
        on(path, replies: reply)
    }

    /// ``on(_:reply:)`` with the replies as an array (built by a loop or a table).
    public func on(_ path: String, replies: [Reply]) {
        add(Route(matcher: .target(.get, RequestTarget(pattern: path)), replies: replies))
    }

    /// Declares the replies to requests with method `method` whose URL path and query are
    /// `path`.
    ///
    /// `path` is the request target without scheme and host, e.g. `"/api/v2/pokemon?limit=20"`.
    /// The path must be equal after percent-decoding; the query items must be the same,
    /// compared as percent-decoded `name=value` pairs in any order (a repeated pair must be
    /// repeated as often). A request with a query does not match a `path` without one.
    ///
    /// An empty `reply` list is a programmer error and stops the program.
    public func on(_ method: HTTPMethod, _ path: String, reply: Reply...) {
        add(Route(matcher: .target(method, RequestTarget(pattern: path)), replies: reply))
    }

    /// Declares the replies to requests for which `matches` returns `true`: for matching on
    /// headers, bodies or hosts. `matches` is called under the transport's lock and must not
    /// call back into the transport.
    ///
    /// An empty `reply` list is a programmer error and stops the program.
    public func on(where matches: @escaping @Sendable (HTTPRequest) -> Bool, reply: Reply...) {
        add(Route(matcher: .predicate(matches), replies: reply))
    }

    /// Every request received since the transport was made or last ``reset()``, in arrival
    /// order, matched or not.
    public var requests: [Recorded] {
        state.withLock { $0.requests }
    }

    /// Suspends until at least `count` requests have been received (``requests`` holds
    /// `count` or more); returns at once when they already have.
    ///
    /// Woken by the arriving requests, never by polling. Returns early, without an error,
    /// when the calling task is cancelled.
    public func waitForRequests(_ count: Int) async {
        let id = state.withLock { $0.makeID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.requests.count >= count || Task.isCancelled { return true }
                    state.requestWaiters.append(RequestWaiter(id: id, count: count, continuation: continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let index = state.requestWaiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.requestWaiters.remove(at: index).continuation
            }
            continuation?.resume()
        }
    }

    /// Forgets every route and every recorded request, as if the transport were new.
    /// Requests already in flight (held at a gate) finish with the reply they were given;
    /// ``waitForRequests(_:)`` callers keep waiting and count from the empty record.
    public func reset() {
        state.withLock { state in
            state.routes.removeAll()
            state.requests.removeAll()
        }
    }

    /// Forgets the recorded requests and keeps the routes and their positions: for checking
    /// only the requests of the next phase of a test.
    public func removeRequests() {
        state.withLock { $0.requests.removeAll() }
    }

    /// Records `request` and answers it from the script.
    ///
    /// - Returns: the scripted response, with `url` set to the request's URL and a zero
    ///   `duration`.
    /// - Throws: `TransportError` with the scripted code for a ``Reply/fail(_:message:)``;
    ///   with code `.cancelled` when the calling task is cancelled before the request arrives
    ///   or while it is held at a gate; with code `.other` when no route matches.
    public func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        let instant = clock?.now
        let date = instant.flatMap { instant in clock.map { $0.date(at: instant) } }
        let cancelled = Task.isCancelled
        let (outcome, waiters) = state.withLock { state -> (Outcome, [CheckedContinuation<Void, Never>]) in
            let index = state.routes.lastIndex { $0.matcher.matches(request) }
            state.requests.append(Recorded(request: request, instant: instant, date: date, matched: index != nil))
            let waiters = state.takeSatisfiedRequestWaiters()
            if cancelled { return (.cancelled, waiters) }
            guard let index else { return (.unmatched(state.routes.map(\.matcher.description)), waiters) }
            return (.reply(state.routes[index].nextReply()), waiters)
        }
        for waiter in waiters { waiter.resume() }
        clock?.noteActivity()
        switch outcome {
        case .cancelled:
            throw Self.cancelled(request)
        case .unmatched(let routes):
            let target = "\(request.method.rawValue) \(RequestTarget(url: request.url).description)"
            let declared = routes.isEmpty ? "no routes are declared" : "routes, newest last: \(routes.joined(separator: ", "))"
            throw TransportError(code: .other, message: "no scripted reply for \(target); \(declared)", request: request)
        case .reply(let reply):
            return try await perform(reply, for: request)
        }
    }

    private func perform(_ reply: Reply, for request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        switch reply {
        case let .status(status, headers, body):
            return HTTPResponse(status: status, headers: headers, body: body, url: request.url, duration: .zero)
        case let .json(text, status, headers):
            var headers = headers
            if !headers.contains("Content-Type") { headers.add(name: "Content-Type", value: "application/json") }
            return HTTPResponse(status: status, headers: headers, body: Data(text.utf8), url: request.url, duration: .zero)
        case let .fail(code, message):
            throw TransportError(code: code, message: message, request: request)
        case let .held(gate, then):
            guard await gate.pass(), !Task.isCancelled else { throw Self.cancelled(request) }
            return try await perform(then, for: request)
        }
    }

    private static func cancelled(_ request: HTTPRequest) -> TransportError {
        TransportError(code: .cancelled, message: "request cancelled", request: request)
    }

    private func add(_ route: Route) {
        precondition(!route.replies.isEmpty, "ScriptedTransport.on(\(route.matcher.description)) needs at least one reply")
        state.withLock { $0.routes.append(route) }
    }

    // MARK: - State

    private enum Matcher: CustomStringConvertible {
        case target(HTTPMethod, RequestTarget)
        case predicate(@Sendable (HTTPRequest) -> Bool)

        func matches(_ request: HTTPRequest) -> Bool {
            switch self {
            case let .target(method, target):
                method == request.method && target == RequestTarget(url: request.url)
            case let .predicate(matches):
                matches(request)
            }
        }

        var description: String {
            switch self {
            case let .target(method, target): "\(method.rawValue) \(target.description)"
            case .predicate: "a where: predicate"
            }
        }
    }

    private struct Route {
        let matcher: Matcher
        let replies: [Reply]
        var served = 0

        /// The reply for the next request: the replies in order, then the last one again.
        mutating func nextReply() -> Reply {
            let reply = replies[min(served, replies.count - 1)]
            served += 1
            return reply
        }
    }

    private enum Outcome {
        case cancelled
        case unmatched([String])
        case reply(Reply)
    }

    private struct RequestWaiter {
        let id: UInt64
        let count: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var routes: [Route] = []
        var requests: [Recorded] = []
        var requestWaiters: [RequestWaiter] = []
        var lastID: UInt64 = 0

        mutating func makeID() -> UInt64 {
            lastID += 1
            return lastID
        }

        mutating func takeSatisfiedRequestWaiters() -> [CheckedContinuation<Void, Never>] {
            let count = requests.count
            let satisfied = requestWaiters.filter { $0.count <= count }.map(\.continuation)
            requestWaiters.removeAll { $0.count <= count }
            return satisfied
        }
    }
}
