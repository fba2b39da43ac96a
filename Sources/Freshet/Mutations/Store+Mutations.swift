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
        if configuration.sendsMutations { mutationQueue.kick(mutation.queue) }
        return PendingMutation(id: id, lsn: lsn, board: mutationOutcomes)
    }

    /// The unresolved mutations, in the order they will be sent (LSN order), read from the log.
    public func pendingMutations() throws(StoreError) -> [QueuedMutation] {
        try checkOpen()
        do {
            return try env.read { txn in
                try overlay.pending(state: state, in: txn).map { lsn, p in
                    let progress = mutationQueue.progress(p.id, queue: p.mutation.queue)
                    return QueuedMutation(id: p.id, name: p.mutation.name, queue: p.mutation.queue, lsn: lsn, attempts: progress.attempts, lastError: progress.lastError)
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

    /// Wakes every queue that has pending mutations.
    func kickMutationQueues() {
        guard configuration.sendsMutations else { return }
        do {
            for queue in Set(try pendingMutations().map(\.queue)) { mutationQueue.kick(queue) }
        } catch {
            // A store that cannot list its queue cannot send it either; the error shows on the next call.
        }
    }

    // MARK: Sending

    /// Sends the first pending mutation of `queue` once; nil when the queue is empty.
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

        // A provisional ID whose creating mutation was rolled back: this one cannot succeed.
        if let dead = first.mappings.first(where: { $0.value.isEmpty && Self.mentions(mutation.request, $0.key) }) {
            let reason = "depends on provisional ID \(dead.key), whose mutation was rolled back"
            return await resolve(id, .mutationRolledBack(Event.MutationRolledBack(id: id, status: nil, reason: reason, affected: affected)),
                                 collection: affected.first ?? queue, outcome: .failure(MutationError(.dependencyRolledBack, "\(mutation.name): \(reason)", mutationID: id)))
        }
        let request: HTTPRequest
        do {
            request = try await buildRequest(mutation, id: id, mappings: first.mappings.filter { !$0.value.isEmpty })
        } catch where error.code == .storage {
            // The token provider failed: that may pass, so the mutation waits and tries again.
            mutationQueue.recordAttempt(id, queue: queue, error: error.message)
            return .retry(after: configuration.retry.delay(afterAttempt: attempt, random: dependencies.random.unitInterval()), error: error.message)
        } catch {
            let reason = "cannot build the request: \(error.message)"
            return await resolve(id, .mutationRolledBack(Event.MutationRolledBack(id: id, status: nil, reason: reason, affected: affected)),
                                 collection: affected.first ?? queue, outcome: .failure(MutationError(.invalidMutation, "\(mutation.name): \(reason)", mutationID: id)))
        }
        var response: HTTPResponse
        var refusal: RedirectRefusal?
        do throws(TransportError) {
            // Redirects: same-origin 307/308 keep method and body; anything else is refused (Store+Origin.swift).
            (response, refusal) = try await exchange(request).unfollowed
            // A 401 renews the token once and sends again with the new one.
            if response.status == 401, let auth = configuration.authentication {
                do {
                    try await auth.refresh()
                } catch {
                    mutationQueue.recordAttempt(id, queue: queue, error: "renewing the token failed: \(error)")
                    return .retry(after: configuration.retry.delay(afterAttempt: attempt, random: dependencies.random.unitInterval()), error: "renewing the token failed")
                }
                var renewed = request
                do {
                    try await authorize(&renewed.headers)
                } catch {
                    mutationQueue.recordAttempt(id, queue: queue, error: "the token provider failed: \(error)")
                    return .retry(after: configuration.retry.delay(afterAttempt: attempt, random: dependencies.random.unitInterval()), error: "the token provider failed")
                }
                (response, refusal) = try await exchange(renewed).unfollowed
            }
        } catch {
            if error.code == .cancelled { return .stop }
            mutationQueue.recordAttempt(id, queue: queue, error: error.message)
            return .retry(after: configuration.retry.delay(afterAttempt: attempt, random: dependencies.random.unitInterval()), error: error.message)
        }
        let status = response.status
        if (200..<300).contains(status) {
            return await confirm(first.proposal, response: response, affected: affected, queue: queue)
        }
        if status >= 500 || status == 408 || status == 429 {
            let message = "\(mutation.request.method) \(logged(request.url)) answered \(status)"
            mutationQueue.recordAttempt(id, queue: queue, error: message)
            var delay = configuration.retry.delay(afterAttempt: attempt, random: dependencies.random.unitInterval())
            if let retryAfter = RetryAfter(headers: response.headers, now: dependencies.now()) {
                // Mutations are never dropped: an absurd Retry-After is capped, not obeyed.
                delay = min(max(retryAfter.delay(from: dependencies.now()), .zero), configuration.retry.maxRetryAfter)
            }
            return .retry(after: delay, error: message)
        }
        let body = String(decoding: response.body.prefix(65_536), as: UTF8.self)
        let reason = refusal.map { "server answered \(status): \($0.message)" } ?? "server answered \(status)"
        return await resolve(id, .mutationRolledBack(Event.MutationRolledBack(id: id, status: status, reason: reason, body: response.body, affected: affected)),
                             collection: affected.first ?? queue,
                             outcome: .failure(MutationError(.rejected, "\(mutation.name) was rejected: \(mutation.request.method) \(logged(request.url)) answered \(status)\(refusal.map { " (\($0.message))" } ?? "")", mutationID: id, status: status, body: body)))
    }

    /// The queue's first unresolved proposal and the ID mappings of the collections it touches.
    private func firstPending(queue: String) throws -> (lsn: LSN, proposal: Event.MutationProposed, mappings: [String: String])? {
        try env.read { txn -> (LSN, Event.MutationProposed, [String: String])? in
            guard let (lsn, p) = try overlay.pending(state: state, in: txn).first(where: { $0.proposal.mutation.queue == queue }) else { return nil }
            return (lsn, p, try idMappings(for: p.mutation, in: txn))
        }
    }

    private func confirm(_ proposal: Event.MutationProposed, response: HTTPResponse, affected: [String], queue: String) async -> MutationQueue.Step {
        let id = proposal.id
        let mutation = proposal.mutation
        var rows: [(collection: String, row: Row)] = []
        var mappings: [Event.MutationConfirmed.IDMapping] = []
        var invalidates = mutation.invalidates
        var failure: MutationError?
        if case .responseRow(let collection, let provisionalID, let idField) = mutation.confirmation {
            switch Self.serverRow(response.body, idField: idField) {
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
            ?? .success(MutationOutcome(id: id, status: response.status, rows: rows.map(\.row), serverID: mappings.first?.serverID, lsn: .zero))
        let step = await resolve(id, .mutationConfirmed(event), collection: affected.first ?? queue, outcome: outcome)
        for collection in invalidates {
            refreshes.bumpGeneration(collection)
            if hub.observedCollections.contains(collection), let resource = refreshes.resource(for: collection) {
                startBackgroundRefresh(resource)
            }
        }
        return step
    }

    /// Appends the resolving event and tells whoever waits.
    private func resolve(_ id: MutationID, _ event: Event, collection: String, outcome: Result<MutationOutcome, MutationError>) async -> MutationQueue.Step {
        do {
            let lsn = try await append(event, to: collection)
            mutationOutcomes.resolve(id, with: outcome.map { var o = $0; o.lsn = lsn; return o })
            return .resolved
        } catch {
            return .stop
        }
    }

    /// The server's row from a response body: a JSON object with an ID under `idField`,
    /// read by the same row extraction refreshes use (sorted keys, values unchanged).
    static func serverRow(_ body: Data, idField: String) -> Result<Row, RowExtraction.Failure> {
        let document = Resource(collection: "confirmation", path: "", rows: .document, id: .field(idField))
        do throws(RowExtraction.Failure) {
            guard let row = try RowExtraction.extract(body, for: document).rows.first else {
                return .failure(RowExtraction.Failure(reason: "the answer holds no row"))
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

    /// The request to send: the path and body with confirmed provisional IDs replaced, the
    /// mutation ID as `Idempotency-Key`, JSON content type, and the bearer token.
    private func buildRequest(_ mutation: Mutation, id: MutationID, mappings: [String: String]) async throws(StoreError) -> HTTPRequest {
        var path = mutation.request.path
        var body = mutation.request.body
        for (provisional, server) in mappings where Self.mentions(mutation.request, provisional) {
            path = path.split(separator: "/", omittingEmptySubsequences: false).map { $0 == provisional ? server : String($0) }.joined(separator: "/")
            if let b = body { body = Self.substitute(provisional, with: server, in: b) }
        }
        guard let url = URL(string: path, relativeTo: configuration.baseURL)?.absoluteURL, url.scheme == "http" || url.scheme == "https" else {
            throw StoreError(.invalidEvent, "\(path.debugDescription) is not an http(s) URL")
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
