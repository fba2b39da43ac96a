import Foundation
import FreshetHTTP
import FreshetLMDB

/// A mutation waiting in the queue, as ``Store/pendingMutations()`` lists it.
public struct QueuedMutation: Sendable, Hashable {
    public var id: MutationID
    public var name: String
    public var queue: String
    /// The LSN of its `mutationProposed` event; the queue sends in this order.
    public var lsn: LSN
    /// Failed send attempts since the store was opened.
    public var attempts: Int
    /// The last attempt's failure, if any.
    public var lastError: String?
    /// Why it is still pending (see ``MutationWait``); nil before this process tried it.
    public var waiting: MutationWait? = nil
}

extension Store {
    /// Proposes an optimistic mutation: commits `mutationProposed` (durable per
    /// ``Configuration/durability``) so observers see its ops at once, then wakes its queue,
    /// which sends the request with the mutation ID as `Idempotency-Key`.
    ///
    /// - Returns: a handle whose ``PendingMutation/outcome()`` waits for the server.
    /// - Throws: ``MutationError/unknownCollection`` when an op names a collection the store
    ///   has never seen; ``MutationError/invalidMutation`` for a malformed mutation or a
    ///   reused ID; ``MutationError/storage`` when it cannot be appended. On a throw nothing
    ///   was appended.
    public func mutate(_ mutation: Mutation) async throws(MutationError) -> PendingMutation {
        try await propose(mutation, id: MutationID(dependencies.uuid()))
    }

    /// Like ``mutate(_:)`` with a mutation ID of your own (for example one kept from an
    /// earlier attempt); an ID that was proposed before is ``MutationError/invalidMutation``.
    public func propose(_ mutation: Mutation, id: MutationID) async throws(MutationError) -> PendingMutation {
        guard !mutation.request.path.isEmpty else {
            throw MutationError(.invalidMutation, "mutation \(mutation.name) has no request path", mutationID: id)
        }
        if let credential = credentialInMutation(mutation.request) {
            throw MutationError(.invalidMutation, "mutation \(mutation.name) is not stored: \(credential)", mutationID: id)
        }
        let known: Set<String>
        do {
            known = Set(try collections())
        } catch {
            throw MutationError(.storage, error.message, mutationID: id)
        }
        for op in mutation.ops where !known.contains(op.collection) && refreshes.resource(for: op.collection) == nil {
            throw MutationError(.unknownCollection, "mutation \(mutation.name) changes \(op.collection.debugDescription), a collection this store has never seen; register its resource first", mutationID: id)
        }
        let primary = mutation.ops.first?.collection ?? mutation.invalidates.first ?? mutation.queue
        let lsn: LSN
        mutationOutcomes.expect(id)
        do {
            lsn = try await append(.mutationProposed(Event.MutationProposed(id: id, mutation: mutation)), to: primary)
        } catch {
            let code: MutationError.Code = error.code == .invalidEvent || error.code == .invalidName ? .invalidMutation : .storage
            throw MutationError(code, error.message, mutationID: id)
        }
        if sendsMutations { mutationQueue.kick(mutation.queue) }
        return PendingMutation(id: id, lsn: lsn, board: mutationOutcomes)
    }

    /// The unresolved mutations, in the order they will be sent (LSN order), read from the log.
    public func pendingMutations() throws(StoreError) -> [QueuedMutation] {
        try checkOpen()
        do {
            return try env.read { txn in
                try overlay.pending(state: state, in: txn).map { lsn, p in
                    let progress = mutationQueue.progress(p.id, queue: p.mutation.queue)
                    return QueuedMutation(id: p.id, name: p.mutation.name, queue: p.mutation.queue, lsn: lsn, attempts: progress.attempts, lastError: progress.lastError,
                                          waiting: waiting(for: p.id))
                }
            }
        } catch {
            throw StoreError(error, doing: "listing pending mutations")
        }
    }

    /// A handle on a pending mutation found after a relaunch, to wait for its outcome.
    public func handle(for mutation: QueuedMutation) -> PendingMutation {
        mutationOutcomes.expect(mutation.id)
        return PendingMutation(id: mutation.id, lsn: mutation.lsn, board: mutationOutcomes)
    }

    /// Registers the resource that feeds a collection, so mutations may name it before its
    /// first fetch and invalidations can refresh it.
    public func register(_ resource: Resource) {
        refreshes.register(resource)
    }

    /// Sends pending mutations now: wakes every queue, cutting a backoff short and retrying
    /// mutations that wait for a trigger (``MutationWait/Retry/onTrigger``), for example after
    /// the user signed in again. ``didBecomeActive()`` and ``networkDidBecomeReachable()``
    /// do this too. Returns at once; ``PendingMutation/outcome()`` waits for the answers.
    public func sendPendingMutations() {
        kickMutationQueues()
    }

    /// Why the pending mutation `id` is not resolved yet, as observers see it: what this
    /// store's last attempt ran into, or ``MutationWait/Code/notSending`` for a store that
    /// does not send mutations.
    func waiting(for id: MutationID) -> MutationWait? {
        guard sendsMutations else {
            return MutationWait(.notSending, "this store does not send mutations (opened read-only, or Configuration.sendsMutations is false)", retry: .onTrigger)
        }
        return mutationOutcomes.waiting(id)
    }

    /// Wakes every queue that has pending mutations.
    func kickMutationQueues() {
        guard sendsMutations else { return }
        do {
            for queue in Set(try pendingMutations().map(\.queue)) { mutationQueue.kick(queue) }
        } catch {
            // A store that cannot list its queue cannot send it either; the error shows on the next call.
        }
    }

    // MARK: Sending

    /// Sends the first pending mutation of `queue` once; nil when the queue is empty.
    ///
    /// Only the server may reject a mutation: a reason on this side (no base URL, a request
    /// that cannot be built, no usable token, offline, a 5xx) keeps it pending with a
    /// ``MutationWait`` that observers see, never appends `mutationRolledBack`.
    func sendFirstMutation(queue: String, attempt: Int) async -> MutationQueue.Step? {
        do {
            try checkOpen()
        } catch {
            return .stop
        }
        let first: (lsn: LSN, proposal: Event.MutationProposed, mappings: [String: String])?
        do {
            first = try firstPending(queue: queue)
        } catch {
            return .stop
        }
        guard let first else { return nil }
        let id = first.proposal.id
        let mutation = first.proposal.mutation
        let affected = Array(Set(mutation.ops.map(\.collection))).sorted()

        /// Keeps the mutation pending and tries again after the backoff (or `delay`).
        func retry(_ message: String, after delay: Duration? = nil) -> MutationQueue.Step {
            let delay = delay ?? configuration.retry.delay(afterAttempt: attempt, random: dependencies.random.unitInterval())
            mutationQueue.recordAttempt(id, queue: queue, error: message)
            hold(id, MutationWait(.retrying, message, retry: .after(delay)), affected: affected)
            return .retry(after: delay, error: message)
        }
        /// Keeps the mutation pending until the next trigger.
        func wait(_ code: MutationWait.Code, _ message: String) -> MutationQueue.Step {
            mutationQueue.recordAttempt(id, queue: queue, error: message)
            hold(id, MutationWait(code, message, retry: .onTrigger), affected: affected)
            return .wait
        }

        // A provisional ID whose creating mutation the server rejected: this one cannot
        // succeed. (That rollback came from a server answer, so this one does too.)
        if let dead = first.mappings.first(where: { $0.value.isEmpty && Self.mentions(mutation.request, $0.key) }) {
            let reason = "depends on provisional ID \(dead.key), whose mutation was rolled back"
            return await resolve(id, .mutationRolledBack(Event.MutationRolledBack(id: id, status: nil, reason: reason, affected: affected)),
                                 collection: affected.first ?? queue, affected: affected,
                                 outcome: .failure(MutationError(.dependencyRolledBack, "\(mutation.name): \(reason)", mutationID: id)))
        }
        let url: URL
        switch requestURL(mutation, mappings: first.mappings.filter { !$0.value.isEmpty }) {
        case .url(let u): url = u
        case .held(let held): return wait(held.code, held.message)
        }
        let request: HTTPRequest
        do {
            request = try await buildRequest(mutation, id: id, url: url, mappings: first.mappings.filter { !$0.value.isEmpty })
        } catch {
            // The token provider failed: that may pass, so the mutation waits and tries again.
            return retry(error.message)
        }
        var response: HTTPResponse
        var refusal: RedirectRefusal?
        do throws(TransportError) {
            // Redirects: same-origin 307/308 keep method and body; anything else is refused (Store+Origin.swift).
            (response, refusal) = try await exchange(request).unfollowed
            // A 401 gets a newer token (one renewal shared by concurrent 401s) and sends again with it.
            if response.status == 401, configuration.authentication != nil {
                do {
                    try await renewToken(after: request)
                } catch {
                    return retry("renewing the token failed: \(error)")
                }
                var renewed = request
                do {
                    try await authorize(&renewed.headers)
                } catch {
                    return retry("the token provider failed: \(error)")
                }
                (response, refusal) = try await exchange(renewed).unfollowed
            }
        } catch {
            if error.code == .cancelled { return .stop }
            return retry(error.message)
        }
        let status = response.status
        let answered = "\(mutation.request.method) \(logged(request.url)) answered \(status)"
        if (200..<300).contains(status) {
            return await confirm(first.proposal, response: response, kind: .applied, affected: affected, queue: queue)
        }
        // DELETE is idempotent (RFC 9110 §9.2.2): 404 (§15.5.5) or 410 (§15.5.11) means the
        // resource is gone, which is what the delete asked for — a retry after a lost
        // response, or a row someone else deleted. Confirmed; the row stays deleted.
        if mutation.request.method == .delete, status == 404 || status == 410 {
            return await confirm(first.proposal, response: response, kind: .alreadyGone, affected: affected, queue: queue)
        }
        if status >= 500 || status == 408 || status == 429 {
            var delay: Duration?
            if let retryAfter = RetryAfter(headers: response.headers, now: dependencies.now()) {
                // Mutations are never dropped: an absurd Retry-After is capped, not obeyed.
                delay = min(max(retryAfter.delay(from: dependencies.now()), .zero), configuration.retry.maxRetryAfter)
            }
            return retry(answered, after: delay)
        }
        // 401 / 407 judge the credentials, not the mutation (RFC 9110 §15.5.2, §15.5.8).
        if status == 401 || status == 407 {
            let why = configuration.authentication == nil ? "no token provider is configured (Configuration.authentication)" : "the renewed token was refused too"
            return wait(.unauthorized, "\(answered); \(why)")
        }
        let body = String(decoding: response.body.prefix(65_536), as: UTF8.self)
        let reason = refusal.map { "server answered \(status): \($0.message)" } ?? "server answered \(status)"
        // A 404 / 410 to an edit says the row is gone: the restored base row is out of date, so
        // its collections are invalidated in the same commit and refetch rather than show it
        // until some later refresh.
        let gone = status == 404 || status == 410
        var invalidations: [(collection: String, event: Event)] = []
        if gone {
            for collection in affected {
                refreshes.bumpGeneration(collection)
                invalidations.append((collection, .invalidated(Event.Invalidated(reason: "\(mutation.name) \(id): \(answered)"))))
            }
        }
        let step = await resolve(id, .mutationRolledBack(Event.MutationRolledBack(id: id, status: status, reason: reason, body: response.body, affected: affected)),
                                 collection: affected.first ?? queue, affected: affected, then: invalidations,
                                 outcome: .failure(MutationError(.rejected, "\(mutation.name) was rejected: \(answered)\(refusal.map { " (\($0.message))" } ?? "")", mutationID: id, status: status, body: body)))
        if case .resolved = step {
            for (collection, _) in invalidations where hub.observedCollections.contains(collection) {
                if let resource = refreshes.resource(for: collection) { startBackgroundRefresh(resource) }
            }
        }
        return step
    }

    /// Records why `id` is still pending and, when that changed, lets observers of its
    /// collections see it (``Snapshot/waitingMutations``).
    /// A wait that shows the same as the one recorded (only its backoff delay is new) is
    /// recorded without a publication (``MutationWait/showsSame(as:)``).
    private func hold(_ id: MutationID, _ wait: MutationWait, affected: [String]) {
        let before = mutationOutcomes.waiting(id)
        guard mutationOutcomes.setWaiting(id, wait) else { return }
        if let before, before.showsSame(as: wait) { return }
        hub.publish(affected)
    }

    /// The queue's first unresolved proposal and the ID mappings of the collections it touches.
    private func firstPending(queue: String) throws -> (lsn: LSN, proposal: Event.MutationProposed, mappings: [String: String])? {
        try env.read { txn -> (LSN, Event.MutationProposed, [String: String])? in
            guard let (lsn, p) = try overlay.pending(state: state, in: txn).first(where: { $0.proposal.mutation.queue == queue }) else { return nil }
            return (lsn, p, try idMappings(for: p.mutation, in: txn))
        }
    }

    private func confirm(_ proposal: Event.MutationProposed, response: HTTPResponse, kind: MutationOutcome.Kind, affected: [String], queue: String) async -> MutationQueue.Step {
        let id = proposal.id
        let mutation = proposal.mutation
        var rows: [(collection: String, row: Row)] = []
        var mappings: [Event.MutationConfirmed.IDMapping] = []
        var invalidates = mutation.invalidates
        var failure: MutationError?
        // An `alreadyGone` answer (a DELETE's 404 / 410) carries no row to fold.
        if kind == .applied, case .responseRow(let collection, let provisionalID, let idField) = mutation.confirmation {
            switch Self.serverRow(response.body, idField: idField, collection: collection) {
            case .success(let row):
                rows.append((collection, row))
                if row.id != provisionalID {
                    mappings.append(.init(collection: collection, provisionalID: provisionalID, serverID: row.id))
                }
            case .failure(let reason):
                // The server accepted the write; a refetch brings its version of the row.
                if !invalidates.contains(collection) { invalidates.append(collection) }
                failure = MutationError(.malformedConfirmation, "\(mutation.name) was accepted (\(response.status)) but its answer is unusable (\(reason.reason)); \(collection) is invalidated", mutationID: id, status: response.status)
            }
        }
        let event = Event.MutationConfirmed(id: id, status: response.status, rows: rows, idMappings: mappings, invalidates: invalidates, affected: affected)
        let outcome: Result<MutationOutcome, MutationError> = failure.map { .failure($0) }
            ?? .success(MutationOutcome(id: id, status: response.status, kind: kind, rows: rows.map(\.row), serverID: mappings.first?.serverID, lsn: .zero))
        // Before the commit, as invalidate() does: a refresh asked for once observers show the
        // confirmation must not join a request that started before it.
        for collection in invalidates { refreshes.bumpGeneration(collection) }
        let step = await resolve(id, .mutationConfirmed(event), collection: affected.first ?? queue, affected: affected, outcome: outcome)
        for collection in invalidates {
            if hub.observedCollections.contains(collection), let resource = refreshes.resource(for: collection) {
                startBackgroundRefresh(resource)
            }
        }
        return step
    }

    /// Appends the resolving event and tells whoever waits. When it cannot be appended (map
    /// full, storage error) the mutation stays pending and the queue waits for a trigger.
    /// `then` are events committed in the same transaction, after it.
    private func resolve(_ id: MutationID, _ event: Event, collection: String, affected: [String], then: [(collection: String, event: Event)] = [],
                         outcome: Result<MutationOutcome, MutationError>) async -> MutationQueue.Step {
        do {
            // The outcome's LSN (a confirmation's) is the last one: confirmations append nothing after.
            let lsn = try await append([(collection, event)] + then)
            mutationOutcomes.resolve(id, with: outcome.map { var o = $0; o.lsn = lsn; return o })
            return .resolved
        } catch where error.code == .closed {
            return .stop
        } catch {
            // Another process (an app extension) resolved it first: the fold refused this
            // second resolution, and the stored one is the outcome.
            if error.code == .invalidEvent, let settled = settledElsewhere(id) {
                mutationOutcomes.resolve(id, with: settled)
                return .resolved
            }
            hold(id, MutationWait(.storage, "recording the \(event.kind.name) failed: \(error.message)", retry: .onTrigger), affected: affected)
            return .wait
        }
    }

    /// The outcome stored for `id` when the log already resolves it (a `mutationConfirmed` or
    /// `mutationRolledBack` after its proposal); nil while it is pending, never proposed, or
    /// the store cannot be read (the caller then holds the mutation as before).
    func settledElsewhere(_ id: MutationID) -> Result<MutationOutcome, MutationError>? {
        do {
            return try env.read { txn -> Result<MutationOutcome, MutationError>? in
                guard let entry = try Fold.mutationEntry(id, state: state, in: txn), entry.state != .pending,
                      let first = entry.lsn.successor else { return nil }
                var settled: Result<MutationOutcome, MutationError>?
                try txn.forEach(state.dbs.log, from: first.keyBytes) { key, value in
                    guard key.count == 8 else { return true }
                    let lsn = LSN(Keys.readUInt64(key, at: 0))
                    switch try LogRecord.decode(Array(value), expectedLSN: lsn).event {
                    case .mutationConfirmed(let c) where c.id == id:
                        // A DELETE's 404 / 410 is the only non-2xx a confirmation holds.
                        let kind: MutationOutcome.Kind = (c.status == 404 || c.status == 410) ? .alreadyGone : .applied
                        settled = .success(MutationOutcome(id: id, status: c.status, kind: kind, rows: c.rows.map(\.row), serverID: c.idMappings.first?.serverID, lsn: lsn))
                    case .mutationRolledBack(let r) where r.id == id:
                        let code: MutationError.Code = r.status == nil ? .dependencyRolledBack : .rejected
                        settled = .failure(MutationError(code, r.reason, mutationID: id, status: r.status, body: String(decoding: r.body, as: UTF8.self)))
                    default:
                        return true
                    }
                    return false
                }
                return settled
            }
        } catch {
            return nil
        }
    }

    /// The server's row from a response body: a JSON object with an ID under `idField`,
    /// read by the same row extraction refreshes use (sorted keys, values unchanged). An ID
    /// no row of `collection` can have (empty, too long) is a failure, so it cannot make
    /// the confirmation unappendable and hold the queue.
    static func serverRow(_ body: Data, idField: String, collection: String) -> Result<Row, RowExtraction.Failure> {
        let document = Resource(collection: "confirmation", path: "", rows: .document, id: .field(idField))
        do throws(RowExtraction.Failure) {
            guard let row = try RowExtraction.extract(body, for: document).rows.first else {
                return .failure(RowExtraction.Failure(reason: "the answer holds no row"))
            }
            do {
                try Keys.validate(rowID: row.id, in: collection)
            } catch {
                return .failure(RowExtraction.Failure(reason: error.message))
            }
            return .success(row)
        } catch {
            return .failure(error)
        }
    }

    /// Provisional ID → server ID ("" when its mutation was rolled back) for the collections
    /// the mutation touches.
    private func idMappings(for mutation: Mutation, in txn: borrowing Transaction) throws -> [String: String] {
        var result: [String: String] = [:]
        for collection in Set(mutation.ops.map(\.collection) + [mutation.confirmationCollection].compactMap { $0 }) {
            let prefix = Keys.collection(collection)
            try txn.forEach(state.dbs.idMap, from: prefix) { key, value in
                guard key.starts(with: prefix) else { return false }
                result[String(decoding: key.dropFirst(prefix.count), as: UTF8.self)] = String(decoding: value, as: UTF8.self)
                return true
            }
        }
        return result
    }

    /// Whether the request names `provisionalID`: as a whole path segment, or as a JSON string
    /// value in the body (never as a substring: "2" is not in "/todos/12").
    static func mentions(_ request: Mutation.Request, _ provisionalID: String) -> Bool {
        if request.path.split(separator: "/").contains(where: { $0 == provisionalID }) { return true }
        guard let body = request.body else { return false }
        func contains(_ value: Any) -> Bool {
            switch value {
            case let s as String: return s == provisionalID
            case let a as [Any]: return a.contains(where: contains)
            case let d as [String: Any]: return d.values.contains(where: contains)
            default: return false
            }
        }
        do {
            return contains(try JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]))
        } catch {
            return false
        }
    }

    /// The URL to send `mutation` to: its path with confirmed provisional IDs replaced,
    /// resolved against ``Configuration/baseURL``; why not, when this configuration cannot
    /// make an http(s) URL of it (the mutation then waits; it is not rejected).
    private func requestURL(_ mutation: Mutation, mappings: [String: String]) -> RequestTarget {
        var path = mutation.request.path
        for (provisional, server) in mappings where Self.mentions(mutation.request, provisional) {
            path = path.split(separator: "/", omittingEmptySubsequences: false).map { $0 == provisional ? server : String($0) }.joined(separator: "/")
        }
        let named = "\(mutation.request.method) \(path.debugDescription)"
        if URL(string: path)?.scheme == nil, configuration.baseURL == nil {
            return .held(MutationWait(.noBaseURL, "\(named) is a relative path and the configuration has no baseURL; it is sent once the store is opened with one", retry: .onTrigger))
        }
        guard let url = URL(string: path, relativeTo: configuration.baseURL)?.absoluteURL, url.scheme == "http" || url.scheme == "https", url.host != nil else {
            let base = configuration.baseURL.map { " against \($0.absoluteString)" } ?? ""
            return .held(MutationWait(.invalidRequest, "\(named) does not make an http(s) URL\(base)", retry: .onTrigger))
        }
        return .url(url)
    }

    /// Where a mutation's request goes, or why it cannot go anywhere yet.
    enum RequestTarget {
        case url(URL)
        case held(MutationWait)
    }

    /// The request to send to `url`: the body with confirmed provisional IDs replaced, the
    /// mutation ID as `Idempotency-Key`, JSON content type, and the bearer token.
    /// - Throws: ``StoreError/storage`` when the token provider fails.
    private func buildRequest(_ mutation: Mutation, id: MutationID, url: URL, mappings: [String: String]) async throws(StoreError) -> HTTPRequest {
        var body = mutation.request.body
        for (provisional, server) in mappings where Self.mentions(mutation.request, provisional) {
            if let b = body { body = Self.substitute(provisional, with: server, in: b) }
        }
        var headers = defaultHeaders()
        for (name, value) in mutation.request.headers.sorted(by: { $0.key < $1.key }) { headers.set(name: name, value: value) }
        headers.set(name: "Idempotency-Key", value: id.description)
        if body != nil, !headers.contains("Content-Type") { headers.set(name: "Content-Type", value: "application/json") }
        do {
            try await authorize(&headers)
        } catch {
            throw StoreError(.storage, "the token provider failed: \(error)")
        }
        return HTTPRequest(method: mutation.request.method, url: url, headers: headers, body: body, timeout: configuration.requestTimeout)
    }

    /// Replaces JSON string values equal to `provisional` by the server ID (as a number when
    /// it is one); a body that is not JSON is sent as it is.
    static func substitute(_ provisional: String, with server: String, in body: Data) -> Data {
        func walk(_ value: Any) -> Any {
            switch value {
            case let s as String where s == provisional: return Int(server).map { $0 as Any } ?? server
            case let a as [Any]: return a.map(walk)
            case let d as [String: Any]: return d.mapValues(walk)
            default: return value
            }
        }
        do {
            let parsed = try JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
            return try JSONSerialization.data(withJSONObject: walk(parsed), options: [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed])
        } catch {
            return body
        }
    }
}

extension Mutation {
    var confirmationCollection: String? {
        if case .responseRow(let c, _, _) = confirmation { return c }
        return nil
    }
}
