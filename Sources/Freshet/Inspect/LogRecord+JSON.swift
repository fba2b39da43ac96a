import Foundation
import FreshetHTTP

extension LogRecord {
    /// The record as one line of JSON for `freshet dump --json`, written by ``JSONWriter``:
    /// the same object as ``jsonObject``, keys sorted, no white space, `/` not escaped.
    public var jsonLine: String {
        var writer = JSONWriter(capacity: 512)
        writeJSON(into: &writer)
        return writer.string
    }

    /// Appends ``jsonLine``'s object to `writer` (for export, which writes many records into one buffer).
    package func writeJSON(into writer: inout JSONWriter) {
        var o = JSONSortedObject()
        o.field("lsn", number: lsn.rawValue)
        o.field("time") { Self.writeISO8601(timestamp, into: &$0) }
        o.field("kind", string: kind.name)
        o.field("collection", string: collection)
        o.field("summary", string: summary)
        switch event {
        case .fetched(let f):
            switch f.placement {
            case .replace: o.field("placement", string: "replace")
            case .page(let index, let isLast):
                o.field("placement", string: "page")
                o.field("page", number: index)
                o.field("isLastPage", bool: isLast)
            case .upsert: o.field("placement", string: "upsert")
            }
            o.field("rowIDs") { $0.array(strings: f.rows.map(\.id)) }
            o.field("response") { Self.writeJSON(f.response, into: &$0) }
            o.field("nextCursor", string: f.nextCursor)
            if let basis = f.basisLSN { o.field("basisLSN", number: basis.rawValue) }
            if f.rowsWithheld { o.field("rowsWithheld", bool: true) }
        case .notModified(let n):
            o.field("response") { Self.writeJSON(n.response, into: &$0) }
            if let page = n.page { o.field("page", number: page) }
            if let basis = n.basisLSN { o.field("basisLSN", number: basis.rawValue) }
        case .fetchFailed(let f):
            o.field("url", string: f.url)
            o.field("reason", string: f.reason)
            if let s = f.status { o.field("status", number: s) }
            o.field("message", string: f.message)
            o.field("attempt", number: f.attempt)
            if let d = f.durationMicros { o.field("durationMicros", number: d) }
        case .changed(let c), .localWrite(let c):
            o.field("ops") { w in
                w.array { a in
                    for op in c.ops {
                        a.element { e in
                            var item = JSONSortedObject()
                            switch op {
                            case .upsert(let row): item.field("op", string: "upsert"); item.field("id", string: row.id)
                            case .delete(let id): item.field("op", string: "delete"); item.field("id", string: id)
                            }
                            item.write(into: &e)
                        }
                    }
                }
            }
            if let origin = c.origin {
                o.field("origin") { w in
                    var item = JSONSortedObject()
                    item.field("source", string: origin.source)
                    item.field("eventID", string: origin.eventID)
                    item.write(into: &w)
                }
            }
        case .invalidated(let i):
            o.field("reason", string: i.reason)
        case .mutationProposed(let p):
            o.field("mutationID", string: p.id.description)
            o.field("name", string: p.mutation.name)
            o.field("queue", string: p.mutation.queue)
            o.field("ops") { w in
                w.array { a in
                    for op in p.mutation.ops {
                        a.element { e in
                            var item = JSONSortedObject()
                            item.field("collection", string: op.collection)
                            switch op.change {
                            case .upsert(let row): item.field("op", string: "upsert"); item.field("id", string: row.id)
                            case .delete(let id): item.field("op", string: "delete"); item.field("id", string: id)
                            }
                            item.write(into: &e)
                        }
                    }
                }
            }
            o.field("request") { w in
                var request = JSONSortedObject()
                request.field("method", string: p.mutation.request.method.rawValue)
                request.field("path", string: p.mutation.request.path)
                request.write(into: &w)
            }
            o.field("invalidates") { $0.array(strings: p.mutation.invalidates) }
        case .mutationConfirmed(let c):
            o.field("mutationID", string: c.id.description)
            o.field("status", number: c.status)
            o.field("rows") { w in
                w.array { a in
                    for r in c.rows {
                        a.element { e in
                            var item = JSONSortedObject()
                            item.field("collection", string: r.collection)
                            item.field("id", string: r.row.id)
                            item.write(into: &e)
                        }
                    }
                }
            }
            o.field("idMappings") { w in
                w.array { a in
                    for m in c.idMappings {
                        a.element { e in
                            var item = JSONSortedObject()
                            item.field("collection", string: m.collection)
                            item.field("provisionalID", string: m.provisionalID)
                            item.field("serverID", string: m.serverID)
                            item.write(into: &e)
                        }
                    }
                }
            }
            o.field("invalidates") { $0.array(strings: c.invalidates) }
        case .mutationRolledBack(let r):
            o.field("mutationID", string: r.id.description)
            if let s = r.status { o.field("status", number: s) }
            o.field("reason", string: r.reason)
            o.field("body", string: String(decoding: r.body, as: UTF8.self))
        case .checkpoint(let c):
            o.field("throughLSN", number: c.throughLSN.rawValue)
            o.field("throughTime") { Self.writeISO8601(c.throughTime, into: &$0) }
            o.field("keptLSNs") { w in w.array { a in for lsn in c.keptLSNs { a.element { $0.number(lsn.rawValue) } } } }
            o.field("removedCount", number: c.removedCount)
            o.field("entries", number: c.entries.count)
        case .evicted(let e):
            o.field("unobservedMicros", number: e.unobservedMicros)
            o.field("gcTimeMicros", number: e.gcTimeMicros)
        }
        o.write(into: &writer)
    }

    private static func writeJSON(_ r: ResponseInfo, into writer: inout JSONWriter) {
        var o = JSONSortedObject()
        o.field("url", string: r.url)
        o.field("status", number: r.status)
        o.field("durationMicros", number: r.durationMicros)
        o.field("responseBytes", number: r.responseBytes)
        o.field("etag", string: r.etag)
        o.field("lastModified", string: r.lastModified)
        o.field("cacheControl", string: r.cacheControl)
        o.field("date", string: r.date)
        o.field("age", string: r.age)
        o.field("expires", string: r.expires)
        o.write(into: &writer)
    }

    /// Writes `"2026-11-29T14:05:03.123Z"` (UTC, milliseconds; the same text as ``iso8601(_:)``)
    /// without a formatter: days to civil date by `HTTPDate.civil(fromDays:)` (H. Hinnant's
    /// `civil_from_days`, proleptic Gregorian calendar). Years outside 0...9999 use the formatter.
    static func writeISO8601(_ date: Date, into writer: inout JSONWriter) {
        // Whole seconds and the truncated milliseconds of the fraction, computed from the
        // reference date as Foundation's formatter does (so float rounding agrees with it).
        let t = date.timeIntervalSinceReferenceDate
        let seconds = t.rounded(.down)
        guard seconds > -63_113_904_000, seconds < 252_423_993_600 else {
            writer.string(iso8601(date))
            return
        }
        let fraction = Int64(((t - seconds) * 1000).rounded(.down))
        let totalMs = (Int64(seconds) + 978_307_200) * 1000 + fraction
        var days = totalMs / 86_400_000
        var msOfDay = totalMs % 86_400_000
        if msOfDay < 0 { msOfDay += 86_400_000; days -= 1 }
        let civil = HTTPDate.civil(fromDays: Int(days))
        let (year, month, day) = (Int64(civil.year), Int64(civil.month), Int64(civil.day))
        var text: [UInt8] = []
        text.reserveCapacity(26)
        func digits(_ v: Int64, _ count: Int) {
            var divisor: Int64 = 1
            for _ in 1..<count { divisor *= 10 }
            var v = v
            for _ in 0..<count {
                text.append(UInt8(ascii: "0") + UInt8(v / divisor))
                v %= divisor
                divisor /= 10
            }
        }
        text.append(UInt8(ascii: "\""))
        digits(year, 4); text.append(UInt8(ascii: "-")); digits(month, 2); text.append(UInt8(ascii: "-")); digits(day, 2)
        text.append(UInt8(ascii: "T"))
        digits(msOfDay / 3_600_000, 2); text.append(UInt8(ascii: ":"))
        digits(msOfDay / 60_000 % 60, 2); text.append(UInt8(ascii: ":"))
        digits(msOfDay / 1000 % 60, 2); text.append(UInt8(ascii: "."))
        digits(msOfDay % 1000, 3)
        text.append(UInt8(ascii: "Z")); text.append(UInt8(ascii: "\""))
        writer.raw(text)
    }

    /// The JSON line `freshet dump --json` prints for a record it cannot read.
    public static func unreadableJSONLine(lsn: LSN, message: String) -> String {
        var writer = JSONWriter(capacity: 128)
        var o = JSONSortedObject()
        o.field("lsn", number: lsn.rawValue)
        o.field("kind", string: "unreadable")
        o.field("error", string: message)
        o.write(into: &writer)
        return writer.string
    }
}
