import FreshetLMDB

/// Server push: changes a push source (Server-Sent Events, a WebSocket, a realtime channel)
/// delivers, appended as `changed` events and folded like fetched rows — the same fold, the
/// same log, one write transaction — so observers see them through the same projection and a
/// pending optimistic write stays on top of them (docs/realtime.md).
extension Store {
    /// Appends the server's upserts and deletes for `collection` as one `changed` event and
    /// folds it: an upsert replaces the row with its ID in place or adds it after the last
    /// row; a delete removes the row (nothing when absent). Pending mutations stay applied on
    /// top in the projection, exactly as over a refetch. The collection's freshness is not
    /// touched (a push is not a validation of the whole collection).
    ///
    /// With an `origin`, the event is checked against the collection's cursor for that source
    /// first (``SyncMark/pushCursors``): an event already folded (``PushOrigin/repeats(_:)``)
    /// appends nothing and returns ``PushResult/duplicate(_:)``. The fold makes the same
    /// check, so two deliveries racing each other still fold once. The cursor is written in the
    /// same transaction as the rows; ``pushCursor(source:)`` reads it back after a relaunch.
    ///
    /// ```swift
    /// let result = try await store.push([.upsert(Row(id: "7", json: body))], to: "todos",
    ///                                   origin: PushOrigin(source: "todos-sse", eventID: "42"))
    /// ```
    ///
    /// - Returns: ``PushResult/applied(_:)`` with the event's LSN once committed (durable per
    ///   ``Configuration/durability``), or ``PushResult/duplicate(_:)``.
    /// Rows are stored in the canonical form the fold gives fetched rows (sorted keys, no
    /// insignificant white space; docs/log-format.md §6.2), so a pushed row and the same row
    /// fetched are the same bytes.
    ///
    /// - Throws: ``StoreError/unknownCollection`` when `collection` is not known to the store —
    ///   the rule ``MutationError/unknownCollection`` uses: known means a resource was
    ///   registered for it in this process (``register(_:)``, ``refresh(_:)``, ``observe(_:)-(Resource)``)
    ///   or it has a SyncMark (an event touched it and it was not evicted), so a typo never
    ///   creates a collection; ``StoreError/invalidName`` for a bad collection name or row ID;
    ///   ``StoreError/invalidEvent`` for a row whose JSON is not exactly one JSON value, or an
    ///   origin whose source or event ID is out of range; ``StoreError/closed``,
    ///   ``StoreError/mapFull``, ``StoreError/storage``. On a throw nothing was appended.
    @discardableResult
    public func push(_ ops: [Event.RowChanges.Op], to collection: String, origin: PushOrigin? = nil) async throws(StoreError) -> PushResult {
        let event = Event.changed(Event.RowChanges(ops, origin: origin))
        try Self.validate(event, in: collection)
        let mark = try syncMark(collection)
        guard mark != nil || refreshes.resource(for: collection) != nil else {
            throw StoreError(.unknownCollection, "push to \(collection.debugDescription), a collection this store has never seen; register its resource first")
        }
        if let origin, let cursor = mark?.pushCursor(source: origin.source), origin.repeats(cursor.eventID) {
            return .duplicate(cursor)
        }
        return .applied(try await append(event, to: collection))
    }

    /// Where push source `source` may resume: the cursor with the highest LSN among every
    /// collection's ``SyncMark/pushCursors`` for it — the last event from that source the store
    /// folded. Its ``PushCursor/eventID`` is what a Server-Sent Events client sends as
    /// `Last-Event-ID`. Nil when the source never delivered an event with an ID.
    ///
    /// Reads every collection's SyncMark (one read transaction): call it when (re)connecting,
    /// not per event.
    ///
    /// - Throws: ``StoreError/closed``, or ``StoreError/corruptRecord`` when a stored mark is malformed.
    public func pushCursor(source: String) throws(StoreError) -> PushCursor? {
        try checkOpen()
        do {
            return try env.read { txn in
                var best: PushCursor?
                for name in try state.collections(in: txn) {
                    guard let cursor = try state.syncMark(name, in: txn)?.pushCursor(source: source) else { continue }
                    if best.map({ cursor.lsn > $0.lsn }) ?? true { best = cursor }
                }
                return best
            }
        } catch {
            throw StoreError(error, doing: "reading the push cursor of \(source)")
        }
    }
}
