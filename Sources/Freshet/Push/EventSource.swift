import Foundation
import FreshetHTTP
import Synchronization

/// A Server-Sent Events push source (WHATWG HTML §9.2): connects to a `text/event-stream`,
/// folds each `change` event into the store with ``Store/push(_:to:origin:)``, and reconnects
/// with `Last-Event-ID` when the stream ends, forever, until its task is cancelled.
///
/// ```swift
/// let todos = Resource(collection: "todos", path: "/todos", rows: .rootArray, id: .field("id"))
/// let source = EventSource(store: store, configuration: .init(
///     url: URL(string: "https://api.example.com/events")!, source: "api-events", resources: [todos]))
/// let task = Task { try await source.run() }
/// ```
///
/// - The event's `id` becomes the change's ``PushOrigin``: a re-delivered event folds
///   nothing, and the last folded ID is durable in the SyncMark, so after a relaunch the first
///   connection sends it as `Last-Event-ID` and the server replays only what was missed.
/// - Reconnection waits ``Configuration/delay(failures:reconnection:random:)`` on the store's
///   clock with the store's random source: the server's `retry:` (or
///   ``Configuration/reconnectionTime``), doubled per attempt that delivered nothing, capped,
///   with jitter, never less than ``Configuration/minimumDelay``.
/// - A 503 or 429 with `Retry-After` waits at least that long (at most
///   ``Configuration/maximumDelay``); a 401 to a request that carried the store's token renews
///   it once (``Store/Configuration/authentication``) and connects again at once.
/// - Bad input never stops the stream: an unknown collection, a malformed change or a line
///   the format ignores is skipped, counted in ``statistics`` and listed in ``problems``.
/// - Requests: `GET` with `Accept: text/event-stream` and `Cache-Control: no-cache`;
///   ``Configuration/defaultHeaders`` and `Authorization` only when the URL has the store's
///   credential origin (``Store/Configuration/baseURL``'s, docs/security.md). Redirects are
///   not followed: a 3xx is ``PushError/rejected``.
public final class EventSource: Sendable {
    public let configuration: Configuration
    private let store: Store
    private let transport: any EventStreamTransport
    private let counters = Mutex(EventSourceStatistics())
    private let recent = Mutex<[PushError]>([])
    /// The stream's last event ID in this process (nil until the first event with an ID).
    private let lastEventID = Mutex<String?>(nil)

    /// How many problems ``problems`` keeps (the oldest are dropped).
    public static let problemsKept = 100

    /// A source feeding `store`, connecting through `transport`. Call ``run()`` from one task
    /// at a time.
    ///
    /// A configuration that cannot work (``Configuration/source`` not 1 to 200 bytes of UTF-8
    /// without control characters, ``Configuration/maximumEventBytes`` below 1) is reported by
    /// ``run()`` as ``PushError/invalidConfiguration``, before anything is sent.
    public init(store: Store, configuration: Configuration, transport: any EventStreamTransport = URLSessionEventStreamTransport()) {
        self.store = store
        self.configuration = configuration
        self.transport = transport
        // Its resources are known to the store from now on, so `Store.push` (which refuses
        // unknown collections) folds their events before their first fetch. A resource the
        // app registered itself is kept.
        for resource in configuration.resources.values where store.refreshes.resource(for: resource.collection) == nil {
            store.register(resource)
        }
    }

    /// What the source has done so far.
    public var statistics: EventSourceStatistics { counters.withLock { $0 } }

    /// The latest problems, oldest first (at most ``problemsKept``).
    public var problems: [PushError] { recent.withLock { $0 } }

    /// The `Last-Event-ID` the next connection sends: the stream's last event ID in this
    /// process, else the store's durable cursor for the source (``Store/pushCursor(source:)``),
    /// else nil (none is sent).
    public func resumeID() throws(StoreError) -> String? {
        if let id = lastEventID.withLock({ $0 }) { return id.isEmpty ? nil : id }
        return try store.pushCursor(source: configuration.source)?.eventID
    }

    /// Connects and folds events, reconnecting after every end of the stream, until the
    /// calling task is cancelled (then it returns) or the server answers 204 No Content (the
    /// standard's way to say stop; then it returns).
    ///
    /// - Throws: ``PushError/rejected`` for a 3xx or a 4xx other than 408 and 429 (a 401 after
    ///   one token renewal, or when the renewal fails);
    ///   ``PushError/wrongContentType`` for a 200 that is not `text/event-stream`;
    ///   ``PushError/store`` when the store cannot append (closed, map full, storage). What was
    ///   folded before stays folded; ``PushError/invalidConfiguration`` at once, before any
    ///   request, for a configuration that cannot work (see ``init(store:configuration:transport:)``).
    public func run() async throws(PushError) {
        if !PushOrigin.isValidSource(configuration.source) {
            throw PushError(.invalidConfiguration, "the source name must be 1 to 200 bytes without control characters, got \(configuration.source.debugDescription)")
        }
        if configuration.maximumEventBytes < 1 {
            throw PushError(.invalidConfiguration, "maximumEventBytes must be at least 1, got \(configuration.maximumEventBytes)")
        }
        var failures = 0
        var reconnection = configuration.reconnectionTime
        while !Task.isCancelled {
            let delivered: Bool
            var atLeast: Duration?
            switch try await connectOnce(reconnection: &reconnection) {
            case .stop: return
            case .ended(let d, let retryAfter):
                delivered = d
                atLeast = retryAfter
            }
            failures = delivered ? 0 : failures + 1
            var wait = configuration.delay(failures: failures, reconnection: reconnection, random: store.dependencies.random.unitInterval())
            // A Retry-After (RFC 9110 §10.2.3) on a 503 or 429 lengthens the wait, up to maximumDelay.
            if let atLeast { wait = max(wait, min(atLeast, configuration.maximumDelay)) }
            do {
                try await store.dependencies.clock.sleep(for: wait)
            } catch {
                return // cancelled
            }
        }
    }

    private enum ConnectionEnd {
        /// Cancelled, or the server said 204.
        case stop
        /// The stream ended or failed; whether it delivered at least one event, and the
        /// server's `Retry-After`, if it sent one with a 503 or 429.
        case ended(Bool, retryAfter: Duration? = nil)
    }

    private func connectOnce(reconnection: inout Duration) async throws(PushError) -> ConnectionEnd {
        counters.withLock { $0.connectionAttempts += 1 }
        var request: HTTPRequest
        do {
            request = try await makeRequest()
        } catch let error as PushError {
            throw error
        } catch {
            failed(PushError(.connectionFailed, "could not prepare the request: \(error)"))
            return .ended(false)
        }
        var response: EventStreamResponse
        var renewed = false
        let endpoint = store.logged(configuration.url)
        while true {
            do throws(TransportError) {
                response = try await transport.open(request)
            } catch {
                if error.code == .cancelled || Task.isCancelled { return .stop }
                failed(PushError(.connectionFailed, error.message))
                return .ended(false)
            }
            // A 401 to a request that carried the store's token: renew it once (shared with
            // concurrent refreshes and mutations) and connect again at once, as fetches do.
            guard response.status == 401, !renewed, request.headers["Authorization"] != nil else { break }
            renewed = true
            do {
                try await store.renewToken(after: request)
                request = try await makeRequest()
            } catch let error as PushError {
                throw error
            } catch {
                throw PushError(.rejected, "\(endpoint) answered 401 and the token could not be renewed: \(error)", status: 401)
            }
        }
        switch response.status {
        case 200: break
        case 204: return .stop
        case 408, 429, 500...599:
            failed(PushError(.connectionFailed, "\(endpoint) answered \(response.status)", status: response.status))
            let retryAfter = RetryAfter(headers: response.headers, now: store.dependencies.now()).map { $0.delay(from: store.dependencies.now()) }
            return .ended(false, retryAfter: retryAfter)
        default:
            throw PushError(.rejected, "\(endpoint) answered \(response.status); the event stream is not retried", status: response.status)
        }
        let contentType = response.headers["Content-Type"] ?? ""
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard mediaType == "text/event-stream" else {
            throw PushError(.wrongContentType, "\(endpoint) answered 200 with Content-Type \(contentType.debugDescription), not text/event-stream", status: 200)
        }
        counters.withLock { $0.connections += 1 }
        var parser = EventStreamParser(maximumEventBytes: configuration.maximumEventBytes)
        var delivered = false
        do {
            for try await chunk in response.body {
                let ignored = parser.ignoredLines
                let oversized = parser.oversizedEvents
                let events = parser.feed(chunk)
                noteParser(parser, ignoredBefore: ignored, oversizedBefore: oversized)
                if let ms = parser.retryMilliseconds { reconnection = .milliseconds(ms) }
                for event in events {
                    delivered = true
                    try await handle(event)
                }
            }
        } catch let error as PushError {
            throw error
        } catch {
            if Task.isCancelled { return .stop }
            failed(PushError(.connectionFailed, "the stream from \(endpoint) failed: \((error as? TransportError)?.message ?? "\(error)")"))
        }
        parser.finish()
        return Task.isCancelled ? .stop : .ended(delivered)
    }

    private func makeRequest() async throws -> HTTPRequest {
        var headers = HTTPHeaders()
        let url = configuration.url
        if let origin = store.credentialOrigin(for: url), origin.contains(url) {
            headers = store.defaultHeaders()
            try await store.authorize(&headers)
        }
        headers.set(name: "Accept", value: "text/event-stream")
        headers.set(name: "Cache-Control", value: "no-cache")
        let resume: String?
        do {
            resume = try resumeID()
        } catch {
            throw PushError(.store, "reading the push cursor of \(configuration.source): \(error.message)")
        }
        if let resume { headers.set(name: "Last-Event-ID", value: resume) }
        return HTTPRequest(url: url, headers: headers)
    }

    private func noteParser(_ parser: EventStreamParser, ignoredBefore: Int, oversizedBefore: Int) {
        let ignored = parser.ignoredLines - ignoredBefore
        let oversized = parser.oversizedEvents - oversizedBefore
        guard ignored > 0 || oversized > 0 else { return }
        counters.withLock {
            $0.ignoredLines += ignored
            $0.oversizedEvents += oversized
        }
        if ignored > 0 { note(PushError(.ignoredLine, "\(ignored) line\(ignored == 1 ? "" : "s") of the event stream ignored (an unknown field, a bad retry or an id with NUL)")) }
        if oversized > 0 { note(PushError(.eventTooLarge, "\(oversized) event\(oversized == 1 ? "" : "s") larger than \(configuration.maximumEventBytes) bytes dropped")) }
    }

    /// Folds one dispatched event, or skips it with a counted problem.
    private func handle(_ event: ServerSentEvent) async throws(PushError) {
        counters.withLock { $0.events += 1 }
        var folded = true
        defer { if folded { lastEventID.withLock { $0 = event.lastEventID } } }
        guard event.type == configuration.eventType else {
            counters.withLock { $0.otherTypes += 1 }
            return
        }
        let id = event.lastEventID
        let message: ChangeMessage
        let ops: [Event.RowChanges.Op]
        let resource: Resource
        do throws(ChangeMessage.Malformed) {
            message = try ChangeMessage.parse(event.data)
            guard let r = configuration.resources[message.collection] else {
                counters.withLock { $0.unknownCollection += 1 }
                note(PushError(.unknownCollection, "event \(id.debugDescription) changes \(message.collection.debugDescription), which this source has no resource for; skipped", eventID: id))
                return
            }
            resource = r
            ops = try message.ops(reading: resource)
        } catch {
            malformed(error.reason, id: id)
            return
        }
        let origin = id.isEmpty ? nil : PushOrigin(source: configuration.source, eventID: id)
        do {
            switch try await store.push(ops, to: resource.collection, origin: origin) {
            case .applied: counters.withLock { $0.applied += 1 }
            case .duplicate: counters.withLock { $0.duplicates += 1 }
            }
        } catch where error.code == .invalidName || error.code == .invalidEvent {
            malformed("the store refused it: \(error.message)", id: id)
        } catch {
            // Not folded: the durable cursor still points before it, so a later run asks for it again.
            folded = false
            lastEventID.withLock { $0 = nil }
            throw PushError(.store, "event \(id.debugDescription) for \(resource.collection) could not be appended: \(error.message)", eventID: id)
        }
    }

    private func malformed(_ reason: String, id: String) {
        counters.withLock { $0.malformed += 1 }
        note(PushError(.malformedEvent, "event \(id.debugDescription): \(reason); skipped", eventID: id))
    }

    private func failed(_ problem: PushError) {
        counters.withLock { $0.connectionFailures += 1 }
        note(problem)
    }

    private func note(_ problem: PushError) {
        recent.withLock {
            $0.append(problem)
            if $0.count > Self.problemsKept { $0.removeFirst($0.count - Self.problemsKept) }
        }
    }
}
