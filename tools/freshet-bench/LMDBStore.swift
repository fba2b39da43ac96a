import CLMDB
import Dispatch
import Foundation
import Synchronization

/// The floor: the same work straight on LMDB's C API, with nothing Freshet adds (no event
/// encoding, no checksum, no SyncMark fields, no observers). Named databases `log`
/// (LSN → the fetched body or written row), `rows` (collection ‖ position → ID length ‖ ID ‖
/// JSON), `rowIndex` (collection ‖ ID → position) and `marks` (collection → LSN). Rows come
/// from ``JSONSlicer`` (the server's bytes). Writes from many tasks are group-committed like
/// Freshet's writer: whatever queued during a commit goes into the next transaction, and
/// whatever queues while that transaction is being written joins it before it commits.
final class LMDBStore: BenchStore, @unchecked Sendable {
    /// `FRESHET_BENCH_FLOOR_LAYOUT`, a comma-separated list, for reproducing docs/performance.md
    /// "W7 round 2: layouts measured on the floor" (unset: the layout above, what the benchmark
    /// measures): `mark-in-rows` keeps each collection's mark in `rows` under ``markKey(_:)``,
    /// right after its last position, and never writes `marks`; `writemap` opens the
    /// environment with `MDB_WRITEMAP`; `equal-rows` is read by the prepare of W7 as issue 9
    /// sets it (every engine; not W7 with equal data, whose stores always hold equal rows): the
    /// 10-collection store gets 5,000 rows a collection, as many rows as the other.
    struct Layout: Sendable {
        var markInRows = false
        var writeMap = false
        var equalRows = false

        /// The layout of this process's environment; an unknown word cannot reach here because
        /// ``Options/parse(_:)`` has already refused it (exit 2).
        static let current = (try? parse(ProcessInfo.processInfo.environment["FRESHET_BENCH_FLOOR_LAYOUT"])) ?? Layout()

        /// Parses the variable's value (nil or empty: today's layout); throws on an unknown word.
        static func parse(_ value: String?) throws(Options.UsageError) -> Layout {
            var layout = Layout()
            for word in value?.split(separator: ",") ?? [] {
                switch word {
                case "mark-in-rows": layout.markInRows = true
                case "writemap": layout.writeMap = true
                case "equal-rows": layout.equalRows = true
                default:
                    throw Options.UsageError(message: "FRESHET_BENCH_FLOOR_LAYOUT: unknown word \(word) (mark-in-rows, writemap, equal-rows)")
                }
            }
            return layout
        }
    }

    // @unchecked: the MDB_env is thread-safe (MDB_NOTLS); write transactions run only on `queue`.
    private let env: OpaquePointer
    private var log = MDB_dbi()
    private var rowsDB = MDB_dbi()
    private var index = MDB_dbi()
    private var marks = MDB_dbi()
    private let queue = DispatchQueue(label: "bench.lmdb.writer")
    private let pending = Mutex<(jobs: [Job], draining: Bool)>(([], false))
    /// `[writes: commits]`, as Freshet's writer counts them.
    private let sizes = Mutex<[Int: Int]>([:])
    private var lastLSN: UInt64 = 0  // only touched on `queue`

    private struct Job: @unchecked Sendable {
        // @unchecked: the closure runs on the writer queue only.
        var work: (OpaquePointer) throws -> Void
        var continuation: CheckedContinuation<Void, any Error>
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func check(_ rc: Int32, _ what: String) throws {
        if rc != 0 { throw Failure(description: "\(what): \(String(cString: mdb_strerror(rc))) (\(rc))") }
    }

    init(directory: String, durability: Durability, readOnly: Bool = false) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var e: OpaquePointer?
        try Self.check(mdb_env_create(&e), "mdb_env_create")
        guard let e else { throw Failure(description: "mdb_env_create gave no handle") }
        env = e
        var flags = UInt32(MDB_NOTLS)
        switch durability {
        case .full: break
        case .relaxed: flags |= UInt32(MDB_NOMETASYNC)
        case .none: flags |= UInt32(MDB_NOSYNC)
        }
        if readOnly { flags |= UInt32(MDB_RDONLY) }
        if Layout.current.writeMap { flags |= UInt32(MDB_WRITEMAP) }
        do {
            try Self.check(mdb_env_set_mapsize(env, 8 << 30), "mdb_env_set_mapsize")
            try Self.check(mdb_env_set_maxdbs(env, 16), "mdb_env_set_maxdbs")
            try Self.check(mdb_env_open(env, directory, flags, 0o644), "mdb_env_open")
            var txn: OpaquePointer?
            try Self.check(mdb_txn_begin(env, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn), "mdb_txn_begin")
            let create = readOnly ? 0 : UInt32(MDB_CREATE)
            try Self.check(mdb_dbi_open(txn, "log", create, &log), "mdb_dbi_open(log)")
            if !readOnly {
                try Self.check(mdb_dbi_open(txn, "rows", create, &rowsDB), "mdb_dbi_open(rows)")
                try Self.check(mdb_dbi_open(txn, "rowIndex", create, &index), "mdb_dbi_open(rowIndex)")
                try Self.check(mdb_dbi_open(txn, "marks", create, &marks), "mdb_dbi_open(marks)")
            }
            try Self.check(mdb_txn_commit(txn), "mdb_txn_commit")
        } catch {
            mdb_env_close(env)
            throw error
        }
        if !readOnly { lastLSN = try readLastLSN() }
    }

    func close() { mdb_env_close(env) }

    var groupSizes: [Int: Int]? { sizes.withLock { $0 } }

    func stage(path: String, body: [UInt8]) {}

    // MARK: Writing

    /// Runs `work` in the next group commit and returns once it is committed.
    private func commit(_ work: @escaping (OpaquePointer) throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            let start = pending.withLock { p -> Bool in
                p.jobs.append(Job(work: work, continuation: c))
                if p.draining { return false }
                p.draining = true
                return true
            }
            if start { queue.async { self.drain() } }
        }
    }

    private func drain() {
        while true {
            var jobs = take(stopDraining: true)
            if jobs.isEmpty { return }
            var txn: OpaquePointer?
            var committed = false
            var failure: (any Error)?
            do {
                try Self.check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
                guard let txn else { throw Failure(description: "no transaction") }
                // As Freshet's writer does: writes queued while the group runs join it,
                // up to 1,024, before it commits.
                var next = 0
                while true {
                    if next == jobs.count {
                        guard jobs.count < 1024 else { break }
                        let more = take(stopDraining: false)
                        if more.isEmpty { break }
                        jobs += more
                    }
                    try jobs[next].work(txn)
                    next += 1
                }
                // LMDB frees the transaction whether or not the commit succeeds.
                let rc = mdb_txn_commit(txn)
                committed = true
                try Self.check(rc, "mdb_txn_commit")
            } catch {
                if let txn, !committed { mdb_txn_abort(txn) }
                failure = error
            }
            sizes.withLock { $0[jobs.count, default: 0] += 1 }
            for job in jobs {
                if let failure { job.continuation.resume(throwing: failure) } else { job.continuation.resume() }
            }
        }
    }

    /// Takes every queued job; with `stopDraining`, an empty queue ends the drain.
    private func take(stopDraining: Bool) -> [Job] {
        pending.withLock { p -> [Job] in
            if p.jobs.isEmpty, stopDraining { p.draining = false }
            defer { p.jobs = [] }
            return p.jobs
        }
    }

    private func put(_ txn: OpaquePointer, _ db: MDB_dbi, _ key: [UInt8], _ value: some ContiguousBytes, flags: Int32 = 0) throws {
        try key.withUnsafeBytes { k in
            try value.withUnsafeBytes { v in
                var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
                var vv = MDB_val(mv_size: v.count, mv_data: UnsafeMutableRawPointer(mutating: v.baseAddress))
                try Self.check(mdb_put(txn, db, &kv, &vv, UInt32(flags)), "mdb_put")
            }
        }
    }

    private func get(_ txn: OpaquePointer, _ db: MDB_dbi, _ key: [UInt8]) throws -> UnsafeRawBufferPointer? {
        var v = MDB_val()
        let rc = key.withUnsafeBytes { k in
            var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
            return mdb_get(txn, db, &kv, &v)
        }
        if rc == MDB_NOTFOUND { return nil }
        try Self.check(rc, "mdb_get")
        return UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
    }

    private func delete(_ txn: OpaquePointer, _ db: MDB_dbi, _ key: [UInt8]) throws {
        let rc = key.withUnsafeBytes { k in
            var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
            return mdb_del(txn, db, &kv, nil)
        }
        if rc != MDB_NOTFOUND { try Self.check(rc, "mdb_del") }
    }

    private static func prefix(_ collection: String) -> [UInt8] {
        let u = Array(collection.utf8)
        return [UInt8(u.count >> 8), UInt8(u.count & 0xFF)] + u
    }

    private static func be(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }

    private static func readBE(_ p: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        var v: UInt64 = 0
        for i in 0..<8 { v = v << 8 | UInt64(p[offset + i]) }
        return v
    }

    private static func rowValue(id: String, json: some Collection<UInt8>) -> [UInt8] {
        let i = Array(id.utf8)
        var v: [UInt8] = [UInt8(i.count >> 8), UInt8(i.count & 0xFF)]
        v.reserveCapacity(2 + i.count + json.count)
        v += i
        v += json
        return v
    }

    private func appendLog(_ txn: OpaquePointer, _ payload: some ContiguousBytes) throws -> UInt64 {
        lastLSN += 1
        try put(txn, log, Self.be(lastLSN), payload, flags: MDB_APPEND)
        return lastLSN
    }

    private func mark(_ txn: OpaquePointer, _ collection: String, lsn: UInt64) throws {
        if Layout.current.markInRows {
            try put(txn, rowsDB, Self.markKey(collection), Self.be(lsn))
        } else {
            try put(txn, marks, Array(collection.utf8), Self.be(lsn))
        }
    }

    /// The collection's prefix ‖ nine 0xFF bytes: one byte longer than a row's key (prefix ‖
    /// 8-byte position), so it sorts after every position of the collection and before the
    /// next collection, and the scans of rows (which stop at a key of another length) end there.
    private static func markKey(_ collection: String) -> [UInt8] {
        prefix(collection) + [UInt8](repeating: 0xFF, count: 9)
    }

    /// Upserts in place, or appends after the last position.
    private func upsert(_ txn: OpaquePointer, prefix: [UInt8], id: String, json: some Collection<UInt8>) throws {
        let indexKey = prefix + Array(id.utf8)
        let position: UInt64
        if let p = try get(txn, index, indexKey), p.count == 8 {
            position = Self.readBE(p, at: 0)
        } else {
            position = try lastPosition(txn, prefix: prefix).map { $0 + 1 } ?? 0
            try put(txn, index, indexKey, Self.be(position))
        }
        try put(txn, rowsDB, prefix + Self.be(position), Self.rowValue(id: id, json: json))
    }

    private func lastPosition(_ txn: OpaquePointer, prefix: [UInt8]) throws -> UInt64? {
        var cursor: OpaquePointer?
        try Self.check(mdb_cursor_open(txn, rowsDB, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        let start = prefix + Self.be(UInt64.max)
        var k = MDB_val()
        var v = MDB_val()
        var rc = start.withUnsafeBytes { s in
            k = MDB_val(mv_size: s.count, mv_data: UnsafeMutableRawPointer(mutating: s.baseAddress))
            return mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE)
        }
        rc = rc == MDB_NOTFOUND ? mdb_cursor_get(cursor, &k, &v, MDB_LAST) : mdb_cursor_get(cursor, &k, &v, MDB_PREV)
        if rc == MDB_NOTFOUND { return nil }
        try Self.check(rc, "mdb_cursor_get")
        let key = UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size)
        guard key.count == prefix.count + 8, key.starts(with: prefix) else { return nil }
        return Self.readBE(key, at: prefix.count)
    }

    /// Deletes every row of the collection (and its index entries).
    private func clear(_ txn: OpaquePointer, prefix: [UInt8]) throws {
        var cursor: OpaquePointer?
        try Self.check(mdb_cursor_open(txn, rowsDB, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var k = MDB_val()
        var v = MDB_val()
        var rc = prefix.withUnsafeBytes { s in
            k = MDB_val(mv_size: s.count, mv_data: UnsafeMutableRawPointer(mutating: s.baseAddress))
            return mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE)
        }
        while rc == 0 {
            let key = UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size)
            guard key.count == prefix.count + 8, key.starts(with: prefix) else { break }
            let value = UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
            let n = Int(value[0]) << 8 | Int(value[1])
            try delete(txn, index, prefix + Array(value[2..<(2 + n)]))
            try Self.check(mdb_cursor_del(cursor, 0), "mdb_cursor_del")
            // After mdb_cursor_del the cursor stands on the next entry; MDB_NEXT returns it.
            rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
        }
        if rc != 0 && rc != MDB_NOTFOUND { try Self.check(rc, "mdb_cursor_get") }
    }

    private func replace(_ txn: OpaquePointer, collection: String, rows: [(id: String, json: ArraySlice<UInt8>)]) throws {
        let prefix = Self.prefix(collection)
        try clear(txn, prefix: prefix)
        for (i, row) in rows.enumerated() {
            let position = UInt64(i)
            try put(txn, rowsDB, prefix + Self.be(position), Self.rowValue(id: row.id, json: row.json))
            try put(txn, index, prefix + Array(row.id.utf8), Self.be(position))
        }
    }

    func write(collection: String, id: String, json: [UInt8]) async throws {
        try await commit { txn in
            let lsn = try self.appendLog(txn, json)
            try self.upsert(txn, prefix: Self.prefix(collection), id: id, json: json)
            try self.mark(txn, collection, lsn: lsn)
        }
    }

    func foldPage(collection: String, path: String, body: [UInt8]) async throws {
        try await commit { txn in
            let rows = try body.withUnsafeBufferPointer { b throws(JSONSlicer.Failure) in
                try JSONSlicer.pageRows(b, rowsKey: "results", idField: "name").map { (id: $0.id, json: body[$0.range]) }
            }
            let lsn = try self.appendLog(txn, body)
            try self.replace(txn, collection: collection, rows: rows)
            try self.mark(txn, collection, lsn: lsn)
        }
    }

    func foldDocument(collection: String, path: String, body: [UInt8]) async throws {
        try await commit { txn in
            let id = try body.withUnsafeBufferPointer { b throws(JSONSlicer.Failure) in try JSONSlicer.id(b, 0..<b.count, field: "id") }
            let lsn = try self.appendLog(txn, body)
            try self.upsert(txn, prefix: Self.prefix(collection), id: id, json: body)
            try self.mark(txn, collection, lsn: lsn)
        }
    }

    func load(_ batches: [(collection: String, rows: [(id: String, json: [UInt8])])], as placement: LoadPlacement) async throws {
        try await commit { txn in
            for b in batches {
                let lsn = try self.appendLog(txn, [UInt8(b.rows.count & 0xFF)])
                switch placement {
                case .replace: try self.replace(txn, collection: b.collection, rows: b.rows.map { (id: $0.id, json: $0.json[...]) })
                case .upsert: for row in b.rows { try self.upsert(txn, prefix: Self.prefix(b.collection), id: row.id, json: row.json) }
                }
                try self.mark(txn, b.collection, lsn: lsn)
            }
        }
    }

    // MARK: Reading

    /// Runs `body` in a read-only transaction.
    func read<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        guard let txn else { throw Failure(description: "no transaction") }
        defer { mdb_txn_abort(txn) }
        return try body(txn)
    }

    /// Lends each row's ID bytes and JSON bytes to `body`, in order.
    func forEachRow(_ collection: String, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        let prefix = Self.prefix(collection)
        try read { txn in
            var cursor: OpaquePointer?
            try Self.check(mdb_cursor_open(txn, rowsDB, &cursor), "mdb_cursor_open")
            defer { mdb_cursor_close(cursor) }
            var k = MDB_val()
            var v = MDB_val()
            var rc = prefix.withUnsafeBytes { s in
                k = MDB_val(mv_size: s.count, mv_data: UnsafeMutableRawPointer(mutating: s.baseAddress))
                return mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE)
            }
            while rc == 0 {
                let key = UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size)
                guard key.count == prefix.count + 8, key.starts(with: prefix) else { break }
                let value = UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
                let n = Int(value[0]) << 8 | Int(value[1])
                try body(UnsafeRawBufferPointer(rebasing: value[2..<(2 + n)]), UnsafeRawBufferPointer(rebasing: value[(2 + n)...]))
                rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
            }
            if rc != 0 && rc != MDB_NOTFOUND { try Self.check(rc, "mdb_cursor_get") }
        }
    }

    func rows(_ collection: String) throws -> [(id: String, json: [UInt8])] {
        var out: [(id: String, json: [UInt8])] = []
        try forEachRow(collection) { id, json in out.append((String(decoding: id, as: UTF8.self), Array(json))) }
        return out
    }

    /// Walks the `log` database: (records, bytes).
    func scanLog() throws -> (records: Int, bytes: Int) {
        try read { txn in
            var cursor: OpaquePointer?
            try Self.check(mdb_cursor_open(txn, log, &cursor), "mdb_cursor_open")
            defer { mdb_cursor_close(cursor) }
            var k = MDB_val()
            var v = MDB_val()
            var n = 0
            var bytes = 0
            var rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
            while rc == 0 {
                n += 1
                bytes += v.mv_size
                rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
            }
            return (n, bytes)
        }
    }

    /// One named database's B-tree, as `mdb_stat` gives it.
    struct TreeShape: Sendable {
        var name: String
        /// Levels: 1 for a tree that is one leaf (0 for an empty one).
        var depth: Int
        var leafPages: Int
        var overflowPages: Int
        var entries: Int
    }

    /// The B-trees `names` of the closed LMDB environment in `directory` (a Freshet store's
    /// or the floor's), read with `mdb_stat` in a read-only transaction; throws when the
    /// environment or a name cannot be opened. W7 notes them, so a run shows which trees are
    /// deeper in one store than in the other.
    static func shapes(directory: String, names: [String]) throws -> [TreeShape] {
        var e: OpaquePointer?
        try check(mdb_env_create(&e), "mdb_env_create")
        guard let env = e else { throw Failure(description: "mdb_env_create gave no handle") }
        defer { mdb_env_close(env) }
        try check(mdb_env_set_mapsize(env, 8 << 30), "mdb_env_set_mapsize")
        try check(mdb_env_set_maxdbs(env, 16), "mdb_env_set_maxdbs")
        try check(mdb_env_open(env, directory, UInt32(MDB_RDONLY | MDB_NOTLS), 0o644), "mdb_env_open")
        var t: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &t), "mdb_txn_begin")
        guard let txn = t else { throw Failure(description: "no transaction") }
        defer { mdb_txn_abort(txn) }
        return try names.map { name in
            var dbi = MDB_dbi()
            try check(mdb_dbi_open(txn, name, 0, &dbi), "mdb_dbi_open(\(name))")
            var stat = MDB_stat()
            try check(mdb_stat(txn, dbi, &stat), "mdb_stat(\(name))")
            return TreeShape(name: name, depth: Int(stat.ms_depth), leafPages: stat.ms_leaf_pages,
                             overflowPages: stat.ms_overflow_pages, entries: stat.ms_entries)
        }
    }

    private func readLastLSN() throws -> UInt64 {
        try read { txn in
            var cursor: OpaquePointer?
            try Self.check(mdb_cursor_open(txn, log, &cursor), "mdb_cursor_open")
            defer { mdb_cursor_close(cursor) }
            var k = MDB_val()
            var v = MDB_val()
            guard mdb_cursor_get(cursor, &k, &v, MDB_LAST) == 0, k.mv_size == 8 else { return 0 }
            return Self.readBE(UnsafeRawBufferPointer(start: k.mv_data, count: 8), at: 0)
        }
    }
}
