import CSQLite
import Dispatch
import Foundation

/// The data layer a Swift developer would otherwise build, on SQLite's C API: WAL mode, a
/// `log` table (one row per write or fetch), row upserts into `rows` (primary key collection +
/// position, unique collection + ID) and a `sync` table, one transaction per operation, all
/// writes through one serial writer as GRDB's `DatabasePool` does. `synchronous` is FULL for
/// `full`, NORMAL for `relaxed`, OFF for `none`. Rows come from ``JSONSlicer``.
final class SQLiteStore: BenchStore, @unchecked Sendable {
    // @unchecked: the connection is used only on `queue`.
    private let db: OpaquePointer
    private let queue = DispatchQueue(label: "bench.sqlite.writer")
    private var statements: [String: OpaquePointer] = [:]
    private var lastLSN: Int64 = 0

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let schema = """
        CREATE TABLE IF NOT EXISTS log(lsn INTEGER PRIMARY KEY, time INTEGER NOT NULL, collection TEXT NOT NULL, kind INTEGER NOT NULL, payload BLOB NOT NULL);
        CREATE TABLE IF NOT EXISTS rows(collection TEXT NOT NULL, position INTEGER NOT NULL, id TEXT NOT NULL, json BLOB NOT NULL,
            PRIMARY KEY(collection, position), UNIQUE(collection, id)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS sync(collection TEXT PRIMARY KEY, lsn INTEGER NOT NULL, fetched_at INTEGER, etag TEXT, next TEXT) WITHOUT ROWID;
        """

    init(directory: String, durability: Durability) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(directory + "/bench.sqlite", &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let handle else {
            sqlite3_close(handle)
            throw Failure(description: "sqlite3_open_v2: \(rc)")
        }
        db = handle
        let sync = switch durability {
        case .full: "FULL"
        case .relaxed: "NORMAL"
        case .none: "OFF"
        }
        do {
            try exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=\(sync);")
            try exec(Self.schema)
            try query("SELECT COALESCE(MAX(lsn), 0) FROM log", bind: { _ in }) { s in self.lastLSN = sqlite3_column_int64(s, 0) }
        } catch {
            sqlite3_close(db)
            throw error
        }
    }

    func close() {
        queue.sync {
            for s in statements.values { sqlite3_finalize(s) }
            statements = [:]
            sqlite3_close(db)
        }
    }

    func stage(path: String, body: [UInt8]) {}

    private func check(_ rc: Int32, _ what: String) throws {
        if rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW {
            throw Failure(description: "\(what): \(String(cString: sqlite3_errmsg(db))) (\(rc))")
        }
    }

    private func exec(_ sql: String) throws {
        try check(sqlite3_exec(db, sql, nil, nil, nil), sql)
    }

    private func statement(_ sql: String) throws -> OpaquePointer {
        if let s = statements[sql] { return s }
        var s: OpaquePointer?
        try check(sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &s, nil), "prepare \(sql)")
        guard let s else { throw Failure(description: "no statement for \(sql)") }
        statements[sql] = s
        return s
    }

    /// Runs `sql` once with the bindings `bind` makes (bytes must stay alive until it returns).
    private func run(_ sql: String, bind: (OpaquePointer) throws -> Void) throws {
        let s = try statement(sql)
        defer {
            sqlite3_reset(s)
            sqlite3_clear_bindings(s)
        }
        try bind(s)
        try check(sqlite3_step(s), sql)
    }

    private func query(_ sql: String, bind: (OpaquePointer) throws -> Void, row: (OpaquePointer) throws -> Void) throws {
        let s = try statement(sql)
        defer {
            sqlite3_reset(s)
            sqlite3_clear_bindings(s)
        }
        try bind(s)
        while true {
            let rc = sqlite3_step(s)
            if rc == SQLITE_DONE { return }
            try check(rc, sql)
            try row(s)
        }
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private func text(_ s: OpaquePointer, _ i: Int32, _ v: String) {
        sqlite3_bind_text(s, i, v, -1, Self.transient)
    }

    private func blob(_ s: OpaquePointer, _ i: Int32, _ v: some ContiguousBytes) {
        v.withUnsafeBytes { b in _ = sqlite3_bind_blob(s, i, b.baseAddress, Int32(b.count), Self.transient) }
    }

    /// One write transaction on the writer queue.
    private func transaction(_ body: @escaping @Sendable () throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            queue.async {
                do {
                    try self.exec("BEGIN IMMEDIATE")
                    do {
                        try body()
                        try self.exec("COMMIT")
                    } catch {
                        try self.exec("ROLLBACK")
                        throw error
                    }
                    c.resume()
                } catch {
                    c.resume(throwing: error)
                }
            }
        }
    }

    private func appendLog(_ collection: String, kind: Int32, _ payload: some ContiguousBytes) throws -> Int64 {
        lastLSN += 1
        let lsn = lastLSN
        try run("INSERT INTO log(lsn, time, collection, kind, payload) VALUES (?, ?, ?, ?, ?)") { s in
            sqlite3_bind_int64(s, 1, lsn)
            sqlite3_bind_int64(s, 2, Int64(Date().timeIntervalSince1970 * 1_000_000))
            text(s, 3, collection)
            sqlite3_bind_int(s, 4, kind)
            blob(s, 5, payload)
        }
        return lsn
    }

    private func sync(_ collection: String, lsn: Int64, fetched: Bool) throws {
        try run("""
            INSERT INTO sync(collection, lsn, fetched_at) VALUES (?1, ?2, ?3)
            ON CONFLICT(collection) DO UPDATE SET lsn = excluded.lsn, fetched_at = COALESCE(excluded.fetched_at, fetched_at)
            """) { s in
            text(s, 1, collection)
            sqlite3_bind_int64(s, 2, lsn)
            if fetched { sqlite3_bind_int64(s, 3, Int64(Date().timeIntervalSince1970 * 1_000_000)) } else { sqlite3_bind_null(s, 3) }
        }
    }

    private func upsert(_ collection: String, id: String, json: some ContiguousBytes) throws {
        try run("""
            INSERT INTO rows(collection, position, id, json)
            VALUES (?1, (SELECT COALESCE(MAX(position) + 1, 0) FROM rows WHERE collection = ?1), ?2, ?3)
            ON CONFLICT(collection, id) DO UPDATE SET json = excluded.json
            """) { s in
            text(s, 1, collection)
            text(s, 2, id)
            blob(s, 3, json)
        }
    }

    private func replace(_ collection: String, rows: [(id: String, json: ArraySlice<UInt8>)]) throws {
        try run("DELETE FROM rows WHERE collection = ?") { s in text(s, 1, collection) }
        for (i, row) in rows.enumerated() {
            try run("INSERT INTO rows(collection, position, id, json) VALUES (?, ?, ?, ?)") { s in
                text(s, 1, collection)
                sqlite3_bind_int64(s, 2, Int64(i))
                text(s, 3, row.id)
                blob(s, 4, row.json)
            }
        }
    }

    func write(collection: String, id: String, json: [UInt8]) async throws {
        try await transaction {
            let lsn = try self.appendLog(collection, kind: 9, json)
            try self.upsert(collection, id: id, json: json)
            try self.sync(collection, lsn: lsn, fetched: false)
        }
    }

    func foldPage(collection: String, path: String, body: [UInt8]) async throws {
        try await transaction {
            let rows = try body.withUnsafeBufferPointer { b throws(JSONSlicer.Failure) in
                try JSONSlicer.pageRows(b, rowsKey: "results", idField: "name").map { (id: $0.id, json: body[$0.range]) }
            }
            let lsn = try self.appendLog(collection, kind: 1, body)
            try self.replace(collection, rows: rows)
            try self.sync(collection, lsn: lsn, fetched: true)
        }
    }

    func foldDocument(collection: String, path: String, body: [UInt8]) async throws {
        try await transaction {
            let id = try body.withUnsafeBufferPointer { b throws(JSONSlicer.Failure) in try JSONSlicer.id(b, 0..<b.count, field: "id") }
            let lsn = try self.appendLog(collection, kind: 1, body)
            try self.upsert(collection, id: id, json: body)
            try self.sync(collection, lsn: lsn, fetched: true)
        }
    }

    func load(_ batches: [(collection: String, rows: [(id: String, json: [UInt8])])], as placement: LoadPlacement) async throws {
        try await transaction {
            for b in batches {
                let lsn = try self.appendLog(b.collection, kind: 1, [UInt8(b.rows.count & 0xFF)])
                switch placement {
                case .replace: try self.replace(b.collection, rows: b.rows.map { (id: $0.id, json: $0.json[...]) })
                case .upsert: for row in b.rows { try self.upsert(b.collection, id: row.id, json: row.json) }
                }
                try self.sync(b.collection, lsn: lsn, fetched: true)
            }
        }
    }

    /// Lends each row's ID and JSON bytes to `body`, in order (one SELECT).
    func forEachRow(_ collection: String, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        try queue.sync {
            try query("SELECT id, json FROM rows WHERE collection = ? ORDER BY position", bind: { s in text(s, 1, collection) }) { s in
                let id = UnsafeRawBufferPointer(start: sqlite3_column_text(s, 0), count: Int(sqlite3_column_bytes(s, 0)))
                let json = UnsafeRawBufferPointer(start: sqlite3_column_blob(s, 1), count: Int(sqlite3_column_bytes(s, 1)))
                try body(id, json)
            }
        }
    }

    func rows(_ collection: String) throws -> [(id: String, json: [UInt8])] {
        var out: [(id: String, json: [UInt8])] = []
        try forEachRow(collection) { id, json in out.append((String(decoding: id, as: UTF8.self), Array(json))) }
        return out
    }
}
