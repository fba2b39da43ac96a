import Foundation

extension LogRecord {
    /// One line saying what the event did, for `freshet dump` and `freshet why`, such as
    /// `page 0 (https://pokeapi.co/api/v2/pokemon?limit=20), 20 rows (1 … 20), next page follows, 200, ETag "9f…", 1.2 ms, 2048 bytes`.
    /// A `fetched`, `notModified` or `fetchFailed` event of a paged collection names its page
    /// (0-based, the index of the SyncMark's page entry) and that page's URL first.
    /// Row IDs, reasons, paths and every other string that came from a server or the log are
    /// escaped by ``TerminalEscaping/escaped(_:)``: the summary never holds a control
    /// character or a terminal escape, so it is always one line.
    public var summary: String {
        TerminalEscaping.escaped(plainSummary)
    }

    private var plainSummary: String {
        switch event {
        case .fetched(let f):
            var parts: [String] = []
            switch f.placement {
            case .replace: parts.append("replace, \(Self.rows(f.rows))")
            // `isLast` is what the fold does with later pages (a server's last page, or page 0
            // of a `.firstPage` reset that names a next page), not "the server's last page".
            case .page(let index, let isLast): parts.append("\(Self.page(index, f.response.url)), \(Self.rows(f.rows)), \(isLast ? "drops later pages" : "keeps later pages")")
            case .upsert: parts.append("upsert \(Self.rows(f.rows))")
            }
            parts.append(contentsOf: Self.response(f.response))
            return parts.joined(separator: ", ")
        case .notModified(let n):
            let page = n.page.map { [Self.page($0, n.response.url)] } ?? []
            return (["304 Not Modified"] + page + Self.response(n.response).dropFirst()).joined(separator: ", ")
        case .fetchFailed(let f):
            let page = f.page.map { "\(Self.page($0, f.url)), " } ?? ""
            return "\(page)attempt \(f.attempt): \(f.reason)\(f.status.map { " \($0)" } ?? "") — \(f.message)"
        case .changed(let c), .localWrite(let c):
            // One row and no origin, the common write, without an array of parts.
            if c.ops.count == 1, c.origin == nil {
                switch c.ops[0] {
                case .upsert(let row): return "upsert " + row.id
                case .delete(let id): return "delete " + id
                }
            }
            let ops = c.ops.map { op in
                switch op {
                case .upsert(let row): "upsert \(row.id)"
                case .delete(let id): "delete \(id)"
                }
            }.joined(separator: ", ")
            guard let origin = c.origin else { return ops }
            return "\(ops) (push \(origin.source) id \(origin.eventID))"

        case .invalidated(let i):
            return i.reason.map { "invalidated: \($0)" } ?? "invalidated"
        case .mutationProposed(let p):
            let m = p.mutation
            let ops = m.ops.map { op in
                switch op.change {
                case .upsert(let row): "upsert \(op.collection)/\(row.id)"
                case .delete(let id): "delete \(op.collection)/\(id)"
                }
            }
            return "\(m.name) \(p.id): \(ops.joined(separator: ", ")); \(m.request.method) \(m.request.path) (queue \(m.queue))"
        case .mutationConfirmed(let c):
            // A confirmation with 404 / 410 is a DELETE of something already gone (docs/mutations.md §9b).
            var parts = ["\(c.id) confirmed, \(c.status)\(c.status == 404 || c.status == 410 ? " (already gone)" : "")"]
            parts += c.idMappings.map { "\($0.collection)/\($0.provisionalID) → \($0.serverID)" }
            if !c.rows.isEmpty { parts.append("\(c.rows.count) server row\(c.rows.count == 1 ? "" : "s")") }
            if !c.invalidates.isEmpty { parts.append("invalidates \(c.invalidates.joined(separator: ", "))") }
            return parts.joined(separator: ", ")
        case .mutationRolledBack(let r):
            return "\(r.id) rolled back\(r.status.map { ", \($0)" } ?? ""): \(r.reason)"
        case .checkpoint(let c):
            return "state through LSN \(c.throughLSN) (\(c.entries.count) entries), \(c.removedCount) older records removed, \(c.keptLSNs.count) kept"
        case .evicted(let e):
            return "evicted after \(Self.seconds(e.unobservedMicros)) unobserved (gcTime \(Self.seconds(e.gcTimeMicros)))"
        }
    }

    /// `page 2 (https://api.test/p?page=3)`: a page index (from 0) and its URL as stored.
    static func page(_ index: Int, _ url: String) -> String {
        url.isEmpty ? "page \(index)" : "page \(index) (\(url))"
    }

    /// Microseconds as seconds for a person: `300 s`, `1.5 s`.
    static func seconds(_ micros: Int64) -> String {
        String(format: "%g s", Double(micros) / 1_000_000)
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
            if let basis = f.basisLSN { o["basisLSN"] = basis.rawValue }
            if f.rowsWithheld { o["rowsWithheld"] = true }
        case .notModified(let n):
            o["response"] = Self.json(n.response)
            if let page = n.page { o["page"] = page }
            if let basis = n.basisLSN { o["basisLSN"] = basis.rawValue }
        case .fetchFailed(let f):
            o["url"] = f.url
            if let page = f.page { o["page"] = page }
            o["reason"] = f.reason
            if let s = f.status { o["status"] = s }
            o["message"] = f.message
            o["attempt"] = f.attempt
            if let d = f.durationMicros { o["durationMicros"] = d }
        case .changed(let c), .localWrite(let c):
            o["ops"] = c.ops.map { op -> [String: Any] in
                switch op {
                case .upsert(let row): ["op": "upsert", "id": row.id]
                case .delete(let id): ["op": "delete", "id": id]
                }
            }
            if let origin = c.origin { o["origin"] = ["source": origin.source, "eventID": origin.eventID] }
        case .invalidated(let i):
            if let r = i.reason { o["reason"] = r }
        case .mutationProposed(let p):
            o["mutationID"] = p.id.description
            o["name"] = p.mutation.name
            o["queue"] = p.mutation.queue
            o["ops"] = p.mutation.ops.map { op -> [String: Any] in
                switch op.change {
                case .upsert(let row): ["op": "upsert", "collection": op.collection, "id": row.id]
                case .delete(let id): ["op": "delete", "collection": op.collection, "id": id]
                }
            }
            o["request"] = ["method": p.mutation.request.method.rawValue, "path": p.mutation.request.path]
            o["invalidates"] = p.mutation.invalidates
        case .mutationConfirmed(let c):
            o["mutationID"] = c.id.description
            o["status"] = c.status
            o["rows"] = c.rows.map { ["collection": $0.collection, "id": $0.row.id] }
            o["idMappings"] = c.idMappings.map { ["collection": $0.collection, "provisionalID": $0.provisionalID, "serverID": $0.serverID] }
            o["invalidates"] = c.invalidates
        case .mutationRolledBack(let r):
            o["mutationID"] = r.id.description
            if let s = r.status { o["status"] = s }
            o["reason"] = r.reason
            o["body"] = String(decoding: r.body, as: UTF8.self)
        case .checkpoint(let c):
            o["throughLSN"] = c.throughLSN.rawValue
            o["throughTime"] = Self.iso8601(c.throughTime)
            o["keptLSNs"] = c.keptLSNs.map(\.rawValue)
            o["removedCount"] = c.removedCount
            o["entries"] = c.entries.count
        case .evicted(let e):
            o["unobservedMicros"] = e.unobservedMicros
            o["gcTimeMicros"] = e.gcTimeMicros
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

    /// `2026-11-29T14:05:03.123Z` (UTC, the stored microsecond rounded down to its millisecond, proleptic Gregorian calendar:
    /// ``appendCivilISO8601(_:to:)``); years outside 0...9999 by Foundation's formatter
    /// (`import` refuses times outside 0001...9999, so only a clock gone wrong writes one).
    public static func iso8601(_ date: Date) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(24)
        guard appendCivilISO8601(date, to: &text) else { return Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date) }
        return String(decoding: text, as: UTF8.self)
    }
}
