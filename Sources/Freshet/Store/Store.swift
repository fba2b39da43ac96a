import Foundation
import FreshetHTTP
import FreshetLMDB
import Synchronization

/// An event-sourced, offline-first store: an LMDB log of everything that happened (fetches,
/// failures, local writes) folded, in the same transaction, into materialized collections
/// with SyncMarks. Views observe collections; the network only appends events.
///
/// ```swift
/// let store = try Store(directory: URL(filePath: "demo-store"),
///                       configuration: .init(baseURL: URL(string: "http://127.0.0.1:8080")))
/// let pokemon = Resource.list("pokemon", path: "/api/v2/pokemon/", query: ["limit": "50"])
/// Task { for try await snapshot in store.observe("pokemon") { print(snapshot.rows.count) } }
/// try await store.refresh(pokemon)
/// ```
///
/// A store is `Sendable`; share one per directory. One process may open a directory once.
public final class Store: Sendable {
    /// The store's directory (it holds LMDB's `data.mdb` and `lock.mdb`), standardized and absolute.
    public let directory: URL
    /// The directory as the caller named it (the `directory` given to `init`, as
    /// `URL.relativePath` spells it: a relative path stays relative, `..` stays): every
    /// message of the store and of the log tools names the store by it, as `freshet` shows
    /// the path the user typed (docs/operations.md, "Exit status").
    public let displayPath: String
    public let configuration: Configuration
    /// The redaction every URL that reaches the log, a message or an error goes through
    /// (``Configuration/redactedQueryParameters``; built once: a refresh uses it several times).
    let urlRedaction: URLRedaction
    let dependencies: Dependencies
    let env: Environment
    let state: MaterializedState
    let writer: LogWriter
    let hub: ObserverHub
    /// Wakes when an observed collection reaches its `staleAt` (one timer per store).
    let stalenessTimer: StalenessTimer
    /// Garbage collection of unobserved collections: when each was last used, and one timer
    /// per store (``Configuration/gcTime``).
    let garbageCollector: GarbageCollector
    /// The file identities this store claimed in ``OpenDirectories``.
    private let claimed: Set<StoreFiles.Identity>
    private let isClosed = Atomic<Bool>(false)
    /// What is in flight, which resource feeds each collection, and `no-store` rows.
    let refreshes = RefreshState()
    /// One token renewal at a time, shared by concurrent 401s.
    let tokenRenewal = TokenRenewal()
    /// Applies unresolved mutations on top of the base rows.
    let overlay = PendingOverlay()
    /// Sends pending mutations.
    let mutationQueue: MutationQueue
    /// Outcomes of mutations, for ``PendingMutation/outcome()``.
    let mutationOutcomes = OutcomeBoard()
    /// Whether this store sends pending mutations: opened for writing and
    /// ``Configuration/sendsMutations``.
    let sendsMutations: Bool
    /// Opened with `create` false (`MDB_RDONLY`): nothing may be written, not even by compaction.
    let isReadOnly: Bool
    /// The store format version as stored (``StoreFormat``): ``StoreFormat/current`` once
    /// opened for writing; an older readable one when opened read-only.
    let formatVersion: UInt8
    private let isClosing = Atomic<Bool>(false)
    /// What the self-compaction at open did (``Configuration/compaction``).
    let openCompactionResult = Mutex<Result<CompactionReport, StoreError>?>(nil)
    /// Polls for other processes' events (``Configuration/externalChangeCheckInterval``).
    private let externalChangePoller = Mutex<Task<Void, Never>?>(nil)

    /// Opens the store in `directory`, creating the directory and an empty store when missing.
    /// With `create` false the store must exist, and it is opened read-only (LMDB
    /// `MDB_RDONLY`: nothing is written, appends fail with ``StoreError/storage``), as tools do.
    ///
    /// New files are owner-only: the directory (when this call creates it) `0700`, `data.mdb`
    /// and `lock.mdb` `0600`. Reader slots left by processes that died mid-read are cleared
    /// (`mdb_reader_check`). Several processes may open the same store for writing at once
    /// (docs/architecture.md, "Several processes"); one process may open it once.
    ///
    /// - Throws: ``StoreError/alreadyOpen`` when this process has the store open already,
    ///   under any path (the same device and inode); ``StoreError/notAStore`` when the
    ///   directory holds something that is not a store — an empty `data.mdb`, a `data.mdb`
    ///   that is not a regular file (a FIFO), no `data.mdb` with `create` false;
    ///   ``StoreError/unsupportedFormat`` for a store written by a newer format;
    ///   ``StoreError/diskFull`` when the file system has no room to create the store;
    ///   ``StoreError/permissionDenied`` when the directory or its files may not be written;
    ///   ``StoreError/invalidConfiguration`` for a map size or reader table out of range;
    ///   ``StoreError/corrupted`` when `data.mdb` is damaged (checked page by page before
    ///   LMDB maps it; see ``StoreError/corrupted`` for the recovery path);
    ///   ``StoreError/storage`` for other LMDB failures. On a throw the directory's files
    ///   are as they were (what this call created is removed).
    public init(directory: URL, configuration: Configuration = Configuration(), dependencies: Dependencies = .live, create: Bool = true) throws(StoreError) {
        guard configuration.mapSize > 0 else {
            throw StoreError(.invalidConfiguration, "Configuration.mapSize is \(configuration.mapSize) bytes; it must be positive")
        }
        guard (1...100_000).contains(configuration.maxReaders) else {
            throw StoreError(.invalidConfiguration, "Configuration.maxReaders is \(configuration.maxReaders); it must be 1 ... 100000")
        }
        let path = directory.standardizedFileURL.path
        let shown = directory.relativePath
        var createdDirectory = false
        if try StoreFiles.identity(of: path) == nil {
            guard create else { throw StoreError(.notAStore, "\(shown) does not exist") }
            createdDirectory = try StoreFiles.createDirectory(path)
        }
        /// Removes the directory again when this call created it and opening failed.
        func undoCreate() {
            if createdDirectory { rmdir(path) }
        }
        let identities: Set<StoreFiles.Identity>
        do {
            identities = try StoreFiles.check(directory: path, create: create, shownAs: shown)
            try StoreFiles.checkDataFile(directory: path, shownAs: shown)
        } catch {
            undoCreate()
            throw error
        }
        guard OpenDirectories.claim(identities) else {
            undoCreate()
            throw StoreError(.alreadyOpen, "\(shown) is already open in this process (under this or another path); share the one Store")
        }
        var claimed = identities
        do {
            let sync: Environment.SyncMode = switch configuration.durability {
            case .full: .full
            case .relaxed: .noMetaSync
            case .none: .noSync
            }
            let env = try Environment(path: path, mapSize: configuration.mapSize, maxDatabases: StoreDatabases.names.count + 2, maxReaders: configuration.maxReaders, sync: sync, readOnly: !create)
            let (dbs, lastLSN, formatVersion) = try Self.prepare(env, shownAs: shown, create: create)
            // The files a new store just created belong to this claim too.
            let created = try StoreFiles.check(directory: path, create: create).subtracting(claimed)
            OpenDirectories.extend(created)
            claimed.formUnion(created)
            let state = MaterializedState(dbs: dbs)
            self.env = env
            self.state = state
            self.directory = URL(fileURLWithPath: path)
            self.displayPath = shown
            self.configuration = configuration
            self.urlRedaction = URLRedaction(secretParameterNames: configuration.redactedQueryParameters)
            self.dependencies = dependencies
            self.claimed = claimed
            self.sendsMutations = create && configuration.sendsMutations
            self.isReadOnly = !create
            self.formatVersion = formatVersion
            // The hub and writer call back into the store weakly: they never outlive it.
            let box = WeakStore()
            let timer = StalenessTimer(now: dependencies.now, clock: dependencies.clock, fire: { collections in
                box.store?.hub.becameStale(collections)
            })
            self.stalenessTimer = timer
            let collector = GarbageCollector(now: dependencies.now, clock: dependencies.clock, gcTime: { collection in
                box.store?.gcTime(for: collection)
            }, fire: {
                box.store?.collectGarbageInBackground()
            })
            // A read-only store cannot append evictions: its collector never runs.
            if !create { collector.stop() }
            self.garbageCollector = collector
            self.hub = ObserverHub(read: { collection in
                guard let store = box.store else { throw StoreError(.closed, "the store is closed") }
                return try store.readSnapshot(collection)
            }, delivered: { collection, snapshot in
                // Only an idle, fresh collection waits for its staleAt; a fetch's end delivers again.
                let q = snapshot.query
                timer.update(collection, staleAt: q.fetch == .idle && !q.isStale ? q.staleAt : nil)
            }, unobserved: { collection in
                collector.used([collection])
            })
            self.writer = LogWriter(env: env, state: state, lastLSN: lastLSN, now: dependencies.now, maxMapSize: configuration.maxMapSize,
                                    commitsOnCaller: configuration.durability == .none,
                                    journalsStamps: formatVersion >= 2, didCommit: { collections, _ in
                collector.used(collections)
                box.store?.hub.publish(collections)
            })
            self.mutationQueue = MutationQueue(clock: dependencies.clock, sendFirst: { queue, attempt in
                guard let store = box.store else { return .stop }
                return await store.sendFirstMutation(queue: queue, attempt: attempt)
            })
            box.store = self
        } catch {
            OpenDirectories.release(claimed)
            undoCreate()
            throw StoreError(error, doing: "opening \(shown)")
        }
        compactOnOpenIfDue()
        // Pending mutations found in the log are sent again (trigger: store open); a read-only
        // store cannot record their outcomes, so it never sends.
        kickMutationQueues()
        if let interval = configuration.externalChangeCheckInterval { startPollingForExternalChanges(every: interval) }
    }

    /// Calls ``checkForExternalChanges()`` every `interval` on the dependencies' clock until
    /// the store closes (or a check fails: the store is unreadable, and observers see why).
    private func startPollingForExternalChanges(every interval: Duration) {
        let clock = dependencies.clock
        let task = Task { [weak self] in
            while true {
                do {
                    try await clock.sleep(for: interval)
                } catch {
                    return  // cancelled: the store closed
                }
                guard let self else { return }
                do {
                    try self.checkForExternalChanges()
                } catch {
                    return
                }
            }
        }
        externalChangePoller.withLock { $0 = task }
    }

    /// Opens the named databases, checks the format version, and finds the last LSN. An
    /// existing store (`create` false) is opened read-only and written nothing.
    private static func prepare(_ env: Environment, shownAs path: String, create: Bool) throws -> (StoreDatabases, LSN, formatVersion: UInt8) {
        func inspect(_ txn: borrowing Transaction) throws -> (StoreDatabases, LSN, version: UInt8, needsVersion: Bool) {
            let dbs: StoreDatabases
            do {
                dbs = try StoreDatabases.open(in: txn, create: create)
            } catch LMDBError.notFound {
                throw StoreError(.notAStore, "\(path) is an LMDB environment without Freshet's databases")
            }
            var needsVersion = false
            var stored = StoreFormat.current
            if let version = try txn.get(dbs.meta, key: MetaKey.formatVersion) {
                let readable = "this Freshet reads formats \(StoreFormat.readable.lowerBound) to \(StoreFormat.readable.upperBound)"
                guard version.count == 1 else {
                    throw StoreError(.unsupportedFormat, "\(path) has a store format version of \(version.count) bytes (\(version.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " "))), where one byte is expected; \(readable)")
                }
                guard StoreFormat.readable.contains(version[0]) else {
                    throw StoreError(.unsupportedFormat, "\(path) has store format \(version[0]); \(readable)")
                }
                // An older format is upgraded when the store is opened for writing (format 1
                // to 2 changes nothing stored: StoreFormat.readable) and no other process has
                // it open, which may be a Freshet of format 1: it would write marks without
                // reading the journal. Inside this write transaction the answer holds for any
                // process that opens the store later (its first write waits for this one).
                stored = version[0]
                needsVersion = create && version[0] != StoreFormat.current && env.isSharedWithOtherProcesses() == false
            } else if create {
                needsVersion = true
            } else {
                throw StoreError(.notAStore, "\(path) has no Freshet format version")
            }
            if create {
                // Every commit that changes a mark reads the stamp journal: a damaged one would
                // fail them all. It is damage like a damaged page (StoreFiles.checkDataFile).
                let stamps: MarkStamps
                do {
                    stamps = try MarkStamps.read(dbs.meta, in: txn)
                } catch let error as StoreError where error.code == .corruptRecord {
                    throw StoreError(.corrupted, "\(path) is damaged (\(error.message)); nothing was written. Its log is intact: `freshet export` it and `freshet import` the export into a new directory to rebuild it without loss (docs/reliability.md, \"A damaged stamp journal\")")
                }
                // Stamps readers ignore (MarkStamps.applies) are leftovers: dropped.
                let kept = try stamps.withoutIgnored(marks: dbs.marks, in: txn)
                if kept != stamps { try kept.write(dbs.meta, in: txn) }
            }
            return (dbs, try dbs.lastLSN(in: txn), needsVersion ? StoreFormat.current : stored, needsVersion)
        }
        guard create else {
            let (dbs, last, version, _) = try env.read { txn in try inspect(txn) }
            return (dbs, last, version)
        }
        return try env.write { txn in
            let (dbs, last, version, needsVersion) = try inspect(txn)
            if needsVersion { try txn.put(dbs.meta, key: MetaKey.formatVersion, value: [StoreFormat.current]) }
            return (dbs, last, version)
        }
    }

    /// Closes the store: refuses new appends, waits for queued ones, ends every observation,
    /// and closes the LMDB environment. Calling it again does nothing.
    public func close() {
        guard !isClosing.exchange(true, ordering: .acquiringAndReleasing) else { return }
        mutationQueue.stop()
        stalenessTimer.stop()
        garbageCollector.stop()
        externalChangePoller.withLock { $0?.cancel() }
        mutationOutcomes.failAll(MutationError(.storage, "the store closed; the mutation stays queued and is sent after the next open"))
        writer.close()
        // Deliveries still queued read the store: end observations before marking it closed,
        // so they end normally rather than with a `closed` error.
        hub.finishAll()
        isClosed.store(true, ordering: .releasing)
        env.close()
        OpenDirectories.release(claimed)
    }

    deinit { close() }

    func checkOpen() throws(StoreError) {
        if isClosed.load(ordering: .acquiring) { throw StoreError(.closed, "the store at \(displayPath) is closed") }
    }

    /// The LSN of the last committed event this process knows of (``LSN/zero`` for an empty
    /// log): its own commits, and other processes' commits seen on its next commit or by
    /// ``checkForExternalChanges()``.
    public var lastLSN: LSN { writer.lastLSN }

    /// How many group commits since the store opened held each number of appends,
    /// `[appends: commits]` (for `freshet-bench` and tests of the writer).
    package var groupCommitSizes: [Int: Int] { writer.groupSizes }

    /// Looks for events other processes appended to this store since this process last
    /// committed or looked, and tells the observers of every collection they touched (each
    /// gets a new snapshot). Cheap when nothing changed: one read transaction reading
    /// `meta.lastLSN` and the log's last key. ``didBecomeActive()`` calls it; an app whose
    /// extension writes the same store may also call it on a timer or on a notification
    /// from the extension (docs/architecture.md, "Several processes").
    ///
    /// - Returns: the names of the collections other processes changed, sorted (empty: none).
    /// - Throws: ``StoreError/closed``, or ``StoreError/storage`` when the store cannot be read.
    @discardableResult
    public func checkForExternalChanges() throws(StoreError) -> [String] {
        try checkOpen()
        do {
            return try writer.checkForExternalChanges().sorted()
        } catch {
            throw StoreError(error, doing: "checking \(displayPath) for other processes' events")
        }
    }

    // MARK: Observing

    /// Observes a collection's projection: the stored rows at once, then again after every
    /// commit that touches it. See ``CollectionObservation``.
    public func observe(_ collection: String) -> CollectionObservation {
        hub.subscribe(collection)
    }

    /// Reads the collection's current projection from the store (no network).
    ///
    /// A read counts as a use for garbage collection: the collection's gc time starts again
    /// (it does not keep the collection the way an observation does; docs/queries.md,
    /// "Garbage collection").
    /// - Throws: ``StoreError/invalidName`` for a name no collection can have,
    ///   ``StoreError/closed``, or ``StoreError/corruptRecord`` if stored state is malformed.
    public func snapshot(_ collection: String) throws(StoreError) -> Snapshot {
        let snapshot = try readSnapshot(collection)
        garbageCollector.used(CollectionOfOne(collection))
        return snapshot
    }

    /// ``snapshot(_:)`` without counting as a use (observers' reads: an observed collection
    /// is never evicted anyway).
    func readSnapshot(_ collection: String) throws(StoreError) -> Snapshot {
        try checkOpen()
        try Keys.validate(collection: collection)
        // Read once, before the transaction, and used for both `status` and `query`: a fetch
        // ends only after its last commit (`appendForRefresh`), so "not fetching" here means
        // the transaction below sees that commit. Read after it (or twice), a fetch ending in
        // between gave a snapshot of the last page but one marked idle, or `refreshing` beside
        // `idle` — an extra emission a 304 revalidation must not produce (docs/queries.md §5).
        let fetching = refreshes.isFetching(collection)
        let read: (rows: [Row], mark: SyncMark?, pending: [MutationID])
        do {
            read = try env.read { txn in
                let mark = try state.syncMark(collection, in: txn)
                // Rows the server marked `no-store` live in memory only (RFC 9111 §5.2.2.5).
                let base = mark?.noStore == true ? (refreshes.volatileRows(collection) ?? []) : try state.rows(collection, in: txn)
                let projected = try overlay.apply(to: base, collection: collection, state: state, in: txn)
                return (projected.rows, mark, projected.mutations)
            }
        } catch {
            throw StoreError(error, doing: "reading \(collection)")
        }
        let query = QueryState.derive(rows: read.rows, mark: read.mark, policy: freshnessPolicy(for: collection), now: dependencies.now(),
                                      isFetching: fetching)
        let status = Snapshot.Status(summarizing: query)
        let waiting = Dictionary(uniqueKeysWithValues: read.pending.compactMap { id in self.waiting(for: id).map { (id, $0) } })
        return Snapshot(collection: collection, rows: read.rows, syncMark: read.mark, status: status, query: query, lsn: read.mark?.lastLSN ?? .zero,
                        pendingMutations: read.pending, waitingMutations: waiting)
    }

    /// The names of every collection an event has touched, sorted.
    public func collections() throws(StoreError) -> [String] {
        try checkOpen()
        do {
            return try env.read { txn in try state.collections(in: txn) }
        } catch {
            throw StoreError(error, doing: "listing collections")
        }
    }

    /// The freshness policy that applies to `collection`: its resource's, else the default.
    public func freshnessPolicy(for collection: String) -> FreshnessPolicy {
        refreshes.resource(for: collection)?.freshness ?? configuration.defaultFreshness
    }

    /// Judges `collection` under its policy now (see ``Freshness/evaluate(_:policy:now:)``).
    func freshness(of collection: String, mark: SyncMark?) -> FreshnessVerdict {
        Freshness.evaluate(mark, policy: freshnessPolicy(for: collection), now: dependencies.now())
    }

    // MARK: Appending

    /// Appends one event to `collection` and folds it in one write transaction.
    ///
    /// - Returns: the event's LSN, once committed (durable per ``Configuration/durability``).
    /// - Throws: ``StoreError/invalidName`` for a bad collection name or row ID,
    ///   ``StoreError/closed``, ``StoreError/mapFull``, ``StoreError/storage``. On a throw
    ///   nothing was appended.
    @discardableResult
    public func append(_ event: Event, to collection: String) async throws(StoreError) -> LSN {
        try await append([(collection, event)])
    }

    /// Appends several events atomically, in order (all are committed, or none).
    /// - Returns: the LSN of the last one.
    @discardableResult
    public func append(_ events: [(collection: String, event: Event)]) async throws(StoreError) -> LSN {
        try await append(events, onCommitted: nil)
    }

    func append(_ events: [(collection: String, event: Event)], onCommitted: (@Sendable () -> Void)?) async throws(StoreError) -> LSN {
        try checkOpen()
        guard !events.isEmpty else { return lastLSN }
        var entries: [LogWriter.Entry] = []
        entries.reserveCapacity(events.count)
        for (collection, event) in events {
            try Self.validate(event, in: collection)
            entries.append(LogWriter.Entry(collection: collection, event: try Self.canonicalRows(event, in: collection)))
        }
        do {
            return try await writer.append(entries, onCommitted: onCommitted)
        } catch {
            throw StoreError(error, doing: "appending to \(events[0].collection)")
        }
    }

    /// Writes to a local-only collection (such as favourites): upserts and deletes, in order,
    /// as one `localWrite` event. Local-only collections are never fetched.
    @discardableResult
    public func localWrite(_ collection: String, _ ops: [Event.RowChanges.Op]) async throws(StoreError) -> LSN {
        try await append(.localWrite(Event.RowChanges(ops)), to: collection)
    }

    /// Marks a collection stale and appends an `invalidated` event: the next
    /// ``refreshIfNeeded(_:)`` goes to the network, and a collection someone observes (through
    /// ``observe(_:)-(Resource)``) is refreshed at once. A refresh already in flight does not
    /// count as the answer: a new request starts after it.
    @discardableResult
    public func invalidate(_ collection: String, reason: String? = nil) async throws(StoreError) -> LSN {
        refreshes.bumpGeneration(collection)
        let lsn = try await append(.invalidated(Event.Invalidated(reason: reason)), to: collection)
        // Observed collections refresh at once; a fetch already in flight finishes first and
        // is followed by this one (it started before the invalidation).
        if hub.observedCollections.contains(collection), let resource = refreshes.resource(for: collection) {
            startBackgroundRefresh(resource)
        }
        return lsn
    }

    static func validate(_ event: Event, in collection: String) throws(StoreError) {
        try Keys.validate(collection: collection)
        // The log stores these numbers unsigned: a negative one is refused, never wrapped.
        func nonNegative(_ value: Int?, _ what: String) throws(StoreError) {
            if let value, value < 0 { throw StoreError(.invalidEvent, "\(event.kind.name) for \(collection): \(what) is \(value), must not be negative") }
        }
        // A reader refuses a larger page index (docs/log-format.md §6.4, §6.5).
        func pageIndex(_ page: Int?) throws(StoreError) {
            try nonNegative(page, "the page index")
            if let page, page > Keys.maxPageIndex {
                throw StoreError(.invalidEvent, "\(event.kind.name) for \(collection): page index \(page) is out of range 0 ... \(Keys.maxPageIndex)")
            }
        }
        func response(_ r: ResponseInfo) throws(StoreError) {
            try nonNegative(r.status, "the HTTP status")
            try nonNegative(r.responseBytes, "the response size")
            try nonNegative(r.requestBytes, "the request size")
        }
        switch event {
        case .fetched(let f): try response(f.response)
        case .notModified(let n):
            try response(n.response)
            try pageIndex(n.page)
        case .fetchFailed(let f):
            try nonNegative(f.status, "the HTTP status")
            try nonNegative(f.attempt, "the attempt number")
            try pageIndex(f.page)
        case .mutationConfirmed(let c): try nonNegative(c.status, "the HTTP status")
        case .mutationRolledBack(let r): try nonNegative(r.status, "the HTTP status")
        default: break
        }
        switch event {
        case .fetched(let f):
            for row in f.rows { try Keys.validate(rowID: row.id, in: collection) }
            if case .page(let index, _) = f.placement, index < 0 || index > Keys.maxPageIndex {
                throw StoreError(.invalidEvent, "page index \(index) of \(collection) is out of range 0 ... \(Keys.maxPageIndex)")
            }
        case .changed(let c), .localWrite(let c):
            for op in c.ops {
                switch op {
                case .upsert(let row): try Keys.validate(rowID: row.id, in: collection)
                case .delete(let id): try Keys.validate(rowID: id, in: collection)
                }
            }
            if let origin = c.origin {
                guard event.kind == .changed else {
                    throw StoreError(.invalidEvent, "localWrite for \(collection) carries a push origin; only changed events come from a push source")
                }
                try origin.validate(in: collection)
            }
        case .mutationProposed(let p):
            for op in p.mutation.ops {
                try Keys.validate(collection: op.collection)
                try Keys.validate(rowID: op.rowID, in: op.collection)
            }
            for name in p.mutation.invalidates { try Keys.validate(collection: name) }
            if case .responseRow(let c, let provisional, _) = p.mutation.confirmation {
                try Keys.validate(collection: c)
                try Keys.validate(rowID: provisional, in: c)
            }
        case .mutationConfirmed(let c):
            for (name, row) in c.rows {
                try Keys.validate(collection: name)
                try Keys.validate(rowID: row.id, in: name)
            }
            for m in c.idMappings {
                try Keys.validate(collection: m.collection)
                try Keys.validate(rowID: m.provisionalID, in: m.collection)
                try Keys.validate(rowID: m.serverID, in: m.collection)
            }
            for name in c.invalidates + c.affected { try Keys.validate(collection: name) }
        case .mutationRolledBack(let r):
            for name in r.affected { try Keys.validate(collection: name) }
        case .checkpoint:
            throw StoreError(.invalidEvent, "checkpoint records are written by compaction only (Store.compact), never appended")
        case .evicted(let e):
            guard e.unobservedMicros >= 0, e.gcTimeMicros >= 0 else {
                throw StoreError(.invalidEvent, "evicted for \(collection): unobservedMicros and gcTimeMicros must not be negative")
            }
        case .notModified, .fetchFailed, .invalidated:
            break
        }
    }
}

/// A weak reference the writer and hub use to reach their store without keeping it alive.
private final class WeakStore: @unchecked Sendable {
    // Set once, in Store.init, before the writer or hub can run.
    weak var store: Store?
}
