import Foundation

extension LogRecord {
    /// One line saying what the event did, for `freshet dump`, such as
    /// `page 0, 20 rows (1 … 20), next page follows, 200, ETag "9f…", 1.2 ms, 2,048 bytes`.
    public var summary: String {
        switch event {
        case .fetched(let f):
            var parts: [String] = []
            switch f.placement {
            case .replace: parts.append("replace, \(Self.rows(f.rows))")
            case .page(let index, let isLast): parts.append("page \(index), \(Self.rows(f.rows)), \(isLast ? "last page" : "next page follows")")
            case .upsert: parts.append("upsert \(Self.rows(f.rows))")
            }
            parts.append(contentsOf: Self.response(f.response))
            return parts.joined(separator: ", ")
        case .notModified(let n):
            return (["304 Not Modified"] + Self.response(n.response).dropFirst()).joined(separator: ", ")
        case .fetchFailed(let f):
            return "attempt \(f.attempt): \(f.reason)\(f.status.map { " \($0)" } ?? "") — \(f.message)"
        case .changed(let c), .localWrite(let c):
            return c.ops.map { op in
                switch op {
                case .upsert(let row): "upsert \(row.id)"
                case .delete(let id): "delete \(id)"
                }
            }.joined(separator: ", ")
        case .invalidated(let i):
            return i.reason.map { "invalidated: \($0)" } ?? "invalidated"
        }
    }

    private static func rows(_ rows: [Row]) -> String {
        switch rows.count {
        case 0: "0 rows"
        case 1: "1 row (\(rows[0].id))"
        default: "\(rows.count) rows (\(rows[0].id) … \(rows[rows.count - 1].id))"
        }
    }

    private static func response(_ r: ResponseInfo) -> [String] {
        var parts = ["\(r.status)"]
        if let etag = r.etag { parts.append("ETag \(etag)") }
        if let cc = r.cacheControl { parts.append("Cache-Control \(cc)") }
        parts.append(String(format: "%.1f ms", Double(r.durationMicros) / 1000))
        parts.append("\(r.responseBytes) bytes")
        return parts
    }

    /// The record as one JSON object (keys sorted), for `freshet dump --json`:
    /// `lsn`, `time` (ISO 8601, UTC, milliseconds), `kind`, `collection`, `summary`, and the
    /// event's fields (`rows` lists row IDs, not bodies).
    public var jsonObject: [String: Any] {
        var o: [String: Any] = [
            "lsn": lsn.rawValue,
            "time": Self.iso8601(timestamp),
            "kind": kind.name,
            "collection": collection,
            "summary": summary,
        ]
        switch event {
        case .fetched(let f):
            switch f.placement {
            case .replace: o["placement"] = "replace"
            case .page(let index, let isLast):
                o["placement"] = "page"
                o["page"] = index
                o["isLastPage"] = isLast
            case .upsert: o["placement"] = "upsert"
            }
            o["rowIDs"] = f.rows.map(\.id)
            o["response"] = Self.json(f.response)
            if let next = f.nextCursor { o["nextCursor"] = next }
        case .notModified(let n):
            o["response"] = Self.json(n.response)
        case .fetchFailed(let f):
            o["url"] = f.url
            o["reason"] = f.reason
            if let s = f.status { o["status"] = s }
            o["message"] = f.message
            o["attempt"] = f.attempt
        case .changed(let c), .localWrite(let c):
            o["ops"] = c.ops.map { op -> [String: Any] in
                switch op {
                case .upsert(let row): ["op": "upsert", "id": row.id]
                case .delete(let id): ["op": "delete", "id": id]
                }
            }
        case .invalidated(let i):
            if let r = i.reason { o["reason"] = r }
        }
        return o
    }

    private static func json(_ r: ResponseInfo) -> [String: Any] {
        var o: [String: Any] = ["url": r.url, "status": r.status, "durationMicros": r.durationMicros, "responseBytes": r.responseBytes]
        if let v = r.etag { o["etag"] = v }
        if let v = r.lastModified { o["lastModified"] = v }
        if let v = r.cacheControl { o["cacheControl"] = v }
        if let v = r.date { o["date"] = v }
        if let v = r.age { o["age"] = v }
        if let v = r.expires { o["expires"] = v }
        return o
    }

    /// `2026-11-29T14:05:03.123Z`.
    public static func iso8601(_ date: Date) -> String {
        Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date)
    }
}
