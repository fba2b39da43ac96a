import Foundation
import Freshet

extension Tool {
    func replay(_ options: Command.ReplayOptions) -> Int32 {
        guard let store = openReadOnly(options.directory) else { return 2 }
        defer { store.close() }
        let filter = options.collection.map(CollectionFilter.init) ?? .all
        let result: Replay
        do {
            result = try store.replay(to: options.point, collections: filter)
        } catch {
            standardError("freshet: \(Self.errorText(error.message))")
            return 2
        }
        if options.json {
            standardOutput(JSONLineWriter.line(.object([
                ("type", .string("replay")), ("lsn", .uint(result.lsn.rawValue)),
                ("time", .optional(result.time.map(LogRecord.iso8601))), ("records", .int(Int64(result.recordCount))),
            ])))
            for snapshot in result.snapshots { standardOutput(JSONLineWriter.line(Self.json(snapshot))) }
            for p in result.pending { standardOutput(JSONLineWriter.line(Self.json(p))) }
        } else {
            let time = result.time.map { " (\(LogRecord.iso8601($0)))" } ?? ""
            standardOutput("replay of \(options.directory) through LSN \(result.lsn)\(time), \(result.recordCount) record\(result.recordCount == 1 ? "" : "s")")
            for snapshot in result.snapshots {
                standardOutput("")
                standardOutput("\(TerminalEscaping.escaped(snapshot.collection))  \(snapshot.rows.count) row\(snapshot.rows.count == 1 ? "" : "s")  \(TerminalEscaping.escaped(snapshot.status.description))  LSN \(snapshot.lsn)")
                if let mark = snapshot.syncMark { standardOutput("  SyncMark  \(TerminalEscaping.escaped(Self.text(mark)))") }
                if !snapshot.pendingMutations.isEmpty {
                    standardOutput("  pending   \(TerminalEscaping.escaped(snapshot.pendingMutations.map(\.description).joined(separator: ", ")))")
                }
                for row in snapshot.rows { standardOutput("  \(TerminalEscaping.escaped(row.id))  \(TerminalEscaping.escapedJSON(String(decoding: row.json, as: UTF8.self)))") }
            }
            standardOutput("")
            standardOutput("pending mutations: \(result.pending.isEmpty ? "none" : String(result.pending.count))")
            for p in result.pending {
                standardOutput("  LSN \(p.lsn)  \(p.id)  \(TerminalEscaping.escaped(p.name))  queue \(TerminalEscaping.escaped(p.queue))  \(TerminalEscaping.escaped(p.collections.joined(separator: ", ")))")
            }
        }
        if let value = options.collection, result.snapshots.isEmpty { reportNoMatch(value, in: options.directory) }
        for problem in result.problems { standardError("freshet: skipped: \(problem)") }
        return result.problems.isEmpty ? 0 : 1
    }

    /// A snapshot as one JSON object: collection, status, lsn, syncMark, pending, rows (id and value).
    static func json(_ s: Snapshot) -> JSONValue {
        .object([
            ("type", .string("collection")), ("collection", .string(s.collection)), ("status", .string(s.status.description)),
            ("lsn", .uint(s.lsn.rawValue)), ("syncMark", s.syncMark.map(json) ?? .null),
            ("pendingMutations", .array(s.pendingMutations.map { .string($0.description) })),
            ("rows", .array(s.rows.map { .object([("id", .string($0.id)), ("value", .rowJSON($0.json))]) })),
        ])
    }

    static func json(_ p: PendingMutationInfo) -> JSONValue {
        .object([
            ("type", .string("pendingMutation")), ("lsn", .uint(p.lsn.rawValue)), ("mutationID", .string(p.id.description)),
            ("name", .string(p.name)), ("queue", .string(p.queue)), ("collections", .array(p.collections.map(JSONValue.string))),
        ])
    }

    /// Every SyncMark field, nil ones as null; times as ISO 8601 UTC.
    static func json(_ m: SyncMark) -> JSONValue {
        func time(_ d: Date?) -> JSONValue { .optional(d.map(LogRecord.iso8601)) }
        func lsn(_ l: LSN?) -> JSONValue { l.map { .uint($0.rawValue) } ?? .null }
        return .object([
            ("fetchedAt", time(m.fetchedAt)), ("fetchedLSN", lsn(m.fetchedLSN)), ("validatedAt", time(m.validatedAt)),
            ("lastLSN", lsn(m.lastLSN)), ("rowsLSN", lsn(m.rowsLSN)),
            ("etag", .optional(m.etag)), ("lastModified", .optional(m.lastModified)), ("cacheControl", .optional(m.cacheControl)),
            ("responseDate", .optional(m.responseDate)), ("age", .optional(m.age)), ("expires", .optional(m.expires)),
            ("nextCursor", .optional(m.nextCursor)), ("pageCount", .int(Int64(m.pageCount))),
            ("pages", .array(m.pages.map { .object([("url", .string($0.url)), ("etag", .optional($0.etag)), ("lastModified", .optional($0.lastModified)), ("next", .optional($0.next))]) })),
            ("lastAttemptAt", time(m.lastAttemptAt)),
            ("lastError", m.lastError.map { e in .object([("reason", .string(e.reason)), ("status", e.status.map { .int(Int64($0)) } ?? .null), ("message", .string(e.message)), ("lsn", .uint(e.lsn.rawValue))]) } ?? .null),
            ("consecutiveFailures", .int(Int64(m.consecutiveFailures))),
            ("invalidatedAt", time(m.invalidatedAt)), ("invalidatedLSN", lsn(m.invalidatedLSN)),
            ("responseDelayMicros", .int(m.responseDelayMicros)), ("noStore", .bool(m.noStore)),
        ])
    }

    /// The SyncMark's set fields on one line: `fetched LSN 2 at …, validated …, ETag "e1", …`.
    static func text(_ m: SyncMark) -> String {
        var parts: [String] = []
        if let f = m.fetchedAt { parts.append("fetched\(m.fetchedLSN.map { " LSN \($0)" } ?? "") at \(LogRecord.iso8601(f))") }
        if let v = m.validatedAt { parts.append("validated \(LogRecord.iso8601(v))") }
        if let e = m.etag { parts.append("ETag \(e)") }
        if let l = m.lastModified { parts.append("Last-Modified \(l)") }
        if let c = m.cacheControl { parts.append("Cache-Control \(c)") }
        if let a = m.age { parts.append("Age \(a)") }
        if let e = m.expires { parts.append("Expires \(e)") }
        if m.pageCount > 0 { parts.append("\(m.pageCount) page\(m.pageCount == 1 ? "" : "s")") }
        if let n = m.nextCursor { parts.append("next \(n)") }
        if let e = m.lastError { parts.append("\(m.consecutiveFailures) failure\(m.consecutiveFailures == 1 ? "" : "s"), last \(e.reason)\(e.status.map { " \($0)" } ?? "") at LSN \(e.lsn)") }
        if let i = m.invalidatedAt { parts.append("invalidated\(m.invalidatedLSN.map { " LSN \($0)" } ?? "") at \(LogRecord.iso8601(i))") }
        if m.noStore { parts.append("no-store") }
        return parts.isEmpty ? "(never fetched)" : parts.joined(separator: ", ")
    }
}
