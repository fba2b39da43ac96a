/// One engine's store, doing the workloads' operations the way that engine does them.
///
/// Every engine keeps the same things: a log (one record per write, per fetched page, per
/// fetched document), rows in collection order with an index by ID, and a per-collection sync
/// record. Each operation is one transaction.
protocol BenchStore: AnyObject, Sendable {
    /// Makes `body` the answer to a GET of `path`, before the timed part (Freshet fetches
    /// through its transport; the other engines are handed the bytes).
    func stage(path: String, body: [UInt8])
    /// One small write (an upsert of one row) in its own transaction, durable per the store's
    /// durability; concurrent callers may share a commit where the engine group-commits.
    func write(collection: String, id: String, json: [UInt8]) async throws
    /// Folds one fetched list page (PokeAPI shape, rows under `results`, ID `name`) as page 0,
    /// the last page, of `collection`: the page's rows replace the collection's.
    func foldPage(collection: String, path: String, body: [UInt8]) async throws
    /// Folds one fetched detail document (ID `id`) as an upsert into `collection`.
    func foldDocument(collection: String, path: String, body: [UInt8]) async throws
    /// Setup: one log record per batch, all batches in one transaction; `.replace`: the
    /// batch's rows replace its collection's; `.upsert`: they are upserted one by one (other
    /// rows stay, an ID not yet there goes after the collection's last row), so a collection
    /// can arrive as many records (W7's equal data).
    func load(_ batches: [(collection: String, rows: [(id: String, json: [UInt8])])], as placement: LoadPlacement) async throws
    /// The collection's rows in order.
    func rows(_ collection: String) throws -> [(id: String, json: [UInt8])]
    /// How many commits held each number of writes, `[writes: commits]`; nil for an engine
    /// that commits each write alone (W1's `FRESHET_BENCH_W1_TRACE`).
    var groupSizes: [Int: Int]? { get }
    func close()
}

/// How ``BenchStore/load(_:as:)`` puts a batch's rows into its collection.
enum LoadPlacement: Sendable {
    case replace
    case upsert
}

extension BenchStore {
    var groupSizes: [Int: Int]? { nil }

    /// Setup: replaces each collection's rows with `rows`, all in one transaction.
    func load(_ batches: [(collection: String, rows: [(id: String, json: [UInt8])])]) async throws {
        try await load(batches, as: .replace)
    }

    func digest(_ collections: [String]) throws -> Digest {
        var d = Digest()
        for c in collections {
            for r in try rows(c) { d.add(id: r.id, json: r.json) }
        }
        return d
    }
}
