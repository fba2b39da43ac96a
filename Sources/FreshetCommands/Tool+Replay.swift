import Foundation
import Freshet

extension Tool {
    func replay(_ options: Command.ReplayOptions) -> Int32 {
        guard let store = openReadOnly(options.directory) else { return 2 }
        defer { store.close() }
        let filter = options.collection.map(CollectionFilter.init) ?? .all
        // Rows are printed from the replayed tables' bytes (``LentReplay``): no `Row` made or
        // freed per row, the replayed state freed on a thread of its own (issue 8's speed round 7).
        let problems: [StoreProblem]
        do {
            problems = try store.withLentReplay(to: options.point, collections: filter) { result throws(ToolError) in
                try write(result, options)
                if let value = options.collection, result.snapshots.isEmpty { reportNoMatch(value, in: options.directory) }
                return result.problems
            }
        } catch {
            standardError("freshet: \(Self.errorText(error.message))")
            return 2
        }
        return reportSkipped(problems)
    }

    /// `replay`'s standard output: the text lines, or with `--json` one JSON object a line.
    private func write(_ result: LentReplay, _ options: Command.ReplayOptions) throws(ToolError) {
        if options.json {
            var w = JSONWriter(capacity: 4096)
            w.object { o in
                o.field("type", string: "replay")
                o.field("lsn", number: result.lsn.rawValue)
                o.field("time") { $0.time(orNull: result.time) }
                o.field("records", number: result.recordCount)
                o.field("checkpoint") { w in
                    if let checkpoint = result.checkpoint {
                        w.object { c in
                            c.field("lsn", number: checkpoint.lsn.rawValue)
                            c.field("throughLSN", number: checkpoint.throughLSN.rawValue)
                        }
                    } else {
                        w.null()
                    }
                }
            }
            standardOutput(w.takeLine())
            for snapshot in result.snapshots {
                try Self.writeJSON(snapshot, of: result, into: &w)
                standardOutput(w.takeLine())
            }
            for p in result.pending {
                Self.writeJSON(p, into: &w)
                standardOutput(w.takeLine())
            }
        } else {
            let time = result.time.map { " (\(LogRecord.iso8601($0)))" } ?? ""
            let start = result.checkpoint.map { " after the \($0)" } ?? ""
            standardOutput("replay of \(options.directory) through LSN \(result.lsn)\(time), \(Self.counted(result.recordCount, "record"))\(start)")
            for snapshot in result.snapshots {
                standardOutput("")
                standardOutput("\(TerminalEscaping.escaped(snapshot.collection))  \(Self.counted(snapshot.rowCount, "row"))  \(TerminalEscaping.escaped(snapshot.status.description))  LSN \(snapshot.lsn)")
                if let mark = snapshot.syncMark { standardOutput("  SyncMark  \(TerminalEscaping.escaped(Self.text(mark)))") }
                if !snapshot.pendingMutations.isEmpty {
                    standardOutput("  pending   \(TerminalEscaping.escaped(snapshot.pendingMutations.map(\.description).joined(separator: ", ")))")
                }
                try writeRowLines(of: snapshot, in: result)
            }
            standardOutput("")
            standardOutput("pending mutations: \(result.pending.isEmpty ? "none" : String(result.pending.count))")
            for p in result.pending {
                standardOutput("  LSN \(p.lsn)  \(p.id)  \(TerminalEscaping.escaped(p.name))  queue \(TerminalEscaping.escaped(p.queue))  \(TerminalEscaping.escaped(p.collections.joined(separator: ", ")))")
            }
        }
    }

    /// `snapshot`'s row lines (``rowLine(id:json:)``): a printable row's line assembled in one
    /// reused buffer and handed to ``standardOutputBytes`` when it is set, no string made.
    private func writeRowLines(of snapshot: LentSnapshot, in result: LentReplay) throws(ToolError) {
        guard let bytesOut = standardOutputBytes else {
            try result.forEachRow(of: snapshot) { id, json in standardOutput(Self.rowLine(id: id, json: json)) }
            return
        }
        var line: [UInt8] = []
        line.reserveCapacity(256)
        try result.forEachRow(of: snapshot) { id, json in
            guard TerminalEscaping.isPrintableASCII(id, backslash: false), TerminalEscaping.isPrintableASCII(json, backslash: true) else {
                standardOutput(Self.rowLine(id: id, json: json))
                return
            }
            line.removeAll(keepingCapacity: true)
            line.append(0x20)
            line.append(0x20)
            line.append(contentsOf: id)
            line.append(0x20)
            line.append(0x20)
            line.append(contentsOf: json)
            line.withUnsafeBytes(bytesOut)
        }
    }

    /// A snapshot as one JSON object: type, collection, status, lsn, syncMark, pendingMutations,
    /// rows (id and value), the rows' IDs and JSON written from their bytes. (Until issue 8's
    /// speed round 7 it was written from a ``Snapshot``'s `Row`s, with the same bytes.)
    static func writeJSON(_ s: LentSnapshot, of replay: LentReplay, into w: inout JSONWriter) throws(ToolError) {
        var failure: ToolError?
        w.object { o in
            o.field("type", string: "collection")
            o.field("collection", string: s.collection)
            o.field("status", string: s.status.description)
            o.field("lsn", number: s.lsn.rawValue)
            o.field("syncMark") { w in if let m = s.syncMark { writeJSON(m, into: &w) } else { w.null() } }
            o.field("pendingMutations") { $0.array(strings: s.pendingMutations.map(\.description)) }
            o.field("rows") { w in
                w.array { a in
                    do throws(ToolError) {
                        try replay.forEachRow(of: s) { id, json in
                            a.element {
                                $0.object { r in
                                    r.field("id") { $0.escapedString(id.assumingMemoryBound(to: UInt8.self)) }
                                    r.field("value") { $0.rowValue(json) }
                                }
                            }
                        }
                    } catch {
                        failure = error
                    }
                }
            }
        }
        if let failure { throw failure }
    }

    static func writeJSON(_ p: PendingMutationInfo, into w: inout JSONWriter) {
        w.object { o in
            o.field("type", string: "pendingMutation")
            o.field("lsn", number: p.lsn.rawValue)
            o.field("mutationID", string: p.id.description)
            o.field("name", string: p.name)
            o.field("queue", string: p.queue)
            o.field("collections") { $0.array(strings: p.collections) }
        }
    }

    /// Every SyncMark field, nil ones as null; times as ISO 8601 UTC.
    static func writeJSON(_ m: SyncMark, into w: inout JSONWriter) {
        w.object { o in
            o.field("fetchedAt") { $0.time(orNull: m.fetchedAt) }
            o.field("fetchedLSN") { $0.lsn(orNull: m.fetchedLSN) }
            o.field("validatedAt") { $0.time(orNull: m.validatedAt) }
            o.field("lastLSN") { $0.lsn(orNull: m.lastLSN) }
            o.field("rowsLSN") { $0.lsn(orNull: m.rowsLSN) }
            o.field("etag") { $0.string(orNull: m.etag) }
            o.field("lastModified") { $0.string(orNull: m.lastModified) }
            o.field("cacheControl") { $0.string(orNull: m.cacheControl) }
            o.field("responseDate") { $0.string(orNull: m.responseDate) }
            o.field("age") { $0.string(orNull: m.age) }
            o.field("expires") { $0.string(orNull: m.expires) }
            o.field("nextCursor") { $0.string(orNull: m.nextCursor) }
            o.field("pageCount", number: m.pageCount)
            o.field("pages") { w in
                w.array { a in
                    for page in m.pages {
                        a.element {
                            $0.object { p in
                                p.field("url", string: page.url)
                                p.field("etag") { $0.string(orNull: page.etag) }
                                p.field("lastModified") { $0.string(orNull: page.lastModified) }
                                p.field("next") { $0.string(orNull: page.next) }
                            }
                        }
                    }
                }
            }
            o.field("lastAttemptAt") { $0.time(orNull: m.lastAttemptAt) }
            o.field("lastError") { w in
                guard let e = m.lastError else { w.null(); return }
                w.object { e2 in
                    e2.field("reason", string: e.reason)
                    e2.field("status") { w in if let s = e.status { w.number(s) } else { w.null() } }
                    e2.field("message", string: e.message)
                    e2.field("lsn", number: e.lsn.rawValue)
                }
            }
            o.field("consecutiveFailures", number: m.consecutiveFailures)
            o.field("invalidatedAt") { $0.time(orNull: m.invalidatedAt) }
            o.field("invalidatedLSN") { $0.lsn(orNull: m.invalidatedLSN) }
            o.field("responseDelayMicros", number: m.responseDelayMicros)
            o.field("noStore", bool: m.noStore)
        }
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
        if m.pageCount > 0 { parts.append("\(Self.counted(m.pageCount, "page"))") }
        if let n = m.nextCursor { parts.append("next \(n)") }
        if let e = m.lastError { parts.append("\(Self.counted(m.consecutiveFailures, "failure")), last \(e.reason)\(e.status.map { " \($0)" } ?? "") at LSN \(e.lsn)") }
        if let i = m.invalidatedAt { parts.append("invalidated\(m.invalidatedLSN.map { " LSN \($0)" } ?? "") at \(LogRecord.iso8601(i))") }
        if m.noStore { parts.append("no-store") }
        return parts.isEmpty ? "(never fetched)" : parts.joined(separator: ", ")
    }
}
