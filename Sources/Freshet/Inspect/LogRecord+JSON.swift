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
    ///
    /// The keys are written in sorted order (UTF-8 bytes, as `JSONSerialization`'s
    /// `.sortedKeys` orders these ASCII keys) as the code is laid out, so nothing is sorted
    /// at run time: each kind's fields are placed among the common ones (`collection`,
    /// `kind`, `lsn`, `summary`, `time`) by hand. `DumpJSONLineTests` compares every kind's
    /// line with `JSONSerialization`'s.
    package func writeJSON(into writer: inout JSONWriter) {
        writer.object { o in
            switch event {
            case .fetched(let f):
                if let basis = f.basisLSN { o.field("basisLSN", number: basis.rawValue) }
                o.field("collection", string: collection)
                if case .page(_, let isLast) = f.placement { o.field("isLastPage", bool: isLast) }
                kindAndLSN(&o)
                o.field("nextCursor", string: f.nextCursor)
                switch f.placement {
                case .replace: o.field("placement", string: "replace")
                case .page(let index, _):
                    o.field("page", number: index)
                    o.field("placement", string: "page")
                case .upsert: o.field("placement", string: "upsert")
                }
                o.field("response") { Self.writeJSON(f.response, into: &$0) }
                o.field("rowIDs") { w in w.array { a in for row in f.rows { a.element { $0.string(row.id) } } } }
                if f.rowsWithheld { o.field("rowsWithheld", bool: true) }
                summaryAndTime(&o)
            case .notModified(let n):
                if let basis = n.basisLSN { o.field("basisLSN", number: basis.rawValue) }
                o.field("collection", string: collection)
                kindAndLSN(&o)
                if let page = n.page { o.field("page", number: page) }
                o.field("response") { Self.writeJSON(n.response, into: &$0) }
                summaryAndTime(&o)
            case .fetchFailed(let f):
                o.field("attempt", number: f.attempt)
                o.field("collection", string: collection)
                if let d = f.durationMicros { o.field("durationMicros", number: d) }
                kindAndLSN(&o)
                o.field("message", string: f.message)
                if let page = f.page { o.field("page", number: page) }
                o.field("reason", string: f.reason)
                if let s = f.status { o.field("status", number: s) }
                summaryAndTime(&o)
                o.field("url", string: f.url)
            case .changed(let c), .localWrite(let c):
                o.field("collection", string: collection)
                kindAndLSN(&o)
                o.field("ops") { w in
                    w.array { a in
                        for op in c.ops {
                            a.element {
                                $0.object { item in
                                    switch op {
                                    case .upsert(let row): item.field("id", string: row.id); item.field("op", string: "upsert")
                                    case .delete(let id): item.field("id", string: id); item.field("op", string: "delete")
                                    }
                                }
                            }
                        }
                    }
                }
                if let origin = c.origin {
                    o.field("origin") { w in
                        w.object { item in
                            item.field("eventID", string: origin.eventID)
                            item.field("source", string: origin.source)
                        }
                    }
                }
                summaryAndTime(&o)
            case .invalidated(let i):
                o.field("collection", string: collection)
                kindAndLSN(&o)
                o.field("reason", string: i.reason)
                summaryAndTime(&o)
            case .mutationProposed(let p):
                o.field("collection", string: collection)
                o.field("invalidates") { $0.array(strings: p.mutation.invalidates) }
                kindAndLSN(&o)
                o.field("mutationID", string: p.id.description)
                o.field("name", string: p.mutation.name)
                o.field("ops") { w in
                    w.array { a in
                        for op in p.mutation.ops {
                            a.element {
                                $0.object { item in
                                    item.field("collection", string: op.collection)
                                    switch op.change {
                                    case .upsert(let row): item.field("id", string: row.id); item.field("op", string: "upsert")
                                    case .delete(let id): item.field("id", string: id); item.field("op", string: "delete")
                                    }
                                }
                            }
                        }
                    }
                }
                o.field("queue", string: p.mutation.queue)
                o.field("request") { w in
                    w.object { request in
                        request.field("method", string: p.mutation.request.method.rawValue)
                        request.field("path", string: p.mutation.request.path)
                    }
                }
                summaryAndTime(&o)
            case .mutationConfirmed(let c):
                o.field("collection", string: collection)
                o.field("idMappings") { w in
                    w.array { a in
                        for m in c.idMappings {
                            a.element {
                                $0.object { item in
                                    item.field("collection", string: m.collection)
                                    item.field("provisionalID", string: m.provisionalID)
                                    item.field("serverID", string: m.serverID)
                                }
                            }
                        }
                    }
                }
                o.field("invalidates") { $0.array(strings: c.invalidates) }
                kindAndLSN(&o)
                o.field("mutationID", string: c.id.description)
                o.field("rows") { w in
                    w.array { a in
                        for r in c.rows {
                            a.element {
                                $0.object { item in
                                    item.field("collection", string: r.collection)
                                    item.field("id", string: r.row.id)
                                }
                            }
                        }
                    }
                }
                o.field("status", number: c.status)
                summaryAndTime(&o)
            case .mutationRolledBack(let r):
                o.field("body", string: String(decoding: r.body, as: UTF8.self))
                o.field("collection", string: collection)
                kindAndLSN(&o)
                o.field("mutationID", string: r.id.description)
                o.field("reason", string: r.reason)
                if let s = r.status { o.field("status", number: s) }
                summaryAndTime(&o)
            case .checkpoint(let c):
                o.field("collection", string: collection)
                o.field("entries", number: c.entries.count)
                o.field("keptLSNs") { w in w.array { a in for lsn in c.keptLSNs { a.element { $0.number(lsn.rawValue) } } } }
                kindAndLSN(&o)
                o.field("removedCount", number: c.removedCount)
                o.field("summary", string: summary)
                o.field("throughLSN", number: c.throughLSN.rawValue)
                o.field("throughTime") { Self.writeISO8601(c.throughTime, into: &$0) }
                o.field("time") { Self.writeISO8601(timestamp, into: &$0) }
            case .evicted(let e):
                o.field("collection", string: collection)
                o.field("gcTimeMicros", number: e.gcTimeMicros)
                kindAndLSN(&o)
                summaryAndTime(&o)
                o.field("unobservedMicros", number: e.unobservedMicros)
            }
        }
    }

    /// The common fields `kind` and `lsn`, adjacent in sorted order.
    private func kindAndLSN(_ o: inout JSONWriter.ObjectWriter) {
        o.field("kind", string: kind.name)
        o.field("lsn", number: lsn.rawValue)
    }

    /// The common fields `summary` and `time`, adjacent in sorted order except in a checkpoint.
    private func summaryAndTime(_ o: inout JSONWriter.ObjectWriter) {
        o.field("summary", string: summary)
        o.field("time") { Self.writeISO8601(timestamp, into: &$0) }
    }

    private static func writeJSON(_ r: ResponseInfo, into writer: inout JSONWriter) {
        writer.object { o in
            o.field("age", string: r.age)
            o.field("cacheControl", string: r.cacheControl)
            o.field("date", string: r.date)
            o.field("durationMicros", number: r.durationMicros)
            o.field("etag", string: r.etag)
            o.field("expires", string: r.expires)
            o.field("lastModified", string: r.lastModified)
            o.field("responseBytes", number: r.responseBytes)
            o.field("status", number: r.status)
            o.field("url", string: r.url)
        }
    }

    /// Writes `"2026-11-29T14:05:03.123Z"` (UTC, milliseconds; the same text as ``iso8601(_:)``).
    /// Written straight into the writer's bytes: an array per call was 11% of `dump --json`.
    static func writeISO8601(_ date: Date, into writer: inout JSONWriter) {
        writer.bytes.append(UInt8(ascii: "\""))
        guard appendCivilISO8601(date, to: &writer.bytes) else {
            writer.bytes.removeLast()
            writer.string(Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date))
            return
        }
        writer.bytes.append(UInt8(ascii: "\""))
    }

    /// The millisecond since 1970 the tools print for `date` and compare `--at` with: the
    /// microsecond a log record stores (``ByteWriter/micros(_:)``), rounded down to its
    /// millisecond, so a record stamped .001000 prints as .001 and one stamped .464512 as .464.
    static func printedMillisecond(_ date: Date) -> Int64 {
        let (q, r) = ByteWriter.micros(date).quotientAndRemainder(dividingBy: 1_000)
        return r < 0 ? q - 1 : q
    }

    /// Appends `2026-11-29T14:05:03.123Z` (UTC, the stored microsecond's millisecond: ``printedMillisecond(_:)``) without a formatter:
    /// days to civil date by `HTTPDate.civil(fromDays:)` (H. Hinnant's `civil_from_days`, the
    /// proleptic Gregorian calendar of ISO 8601, also before 1582, where Foundation's
    /// calendar switches to the Julian one and prints 0001-01-01 as 0001-01-03).
    /// - Returns: false (nothing appended) for years outside 0...9999.
    static func appendCivilISO8601(_ date: Date, to text: inout [UInt8]) -> Bool {
        // The millisecond of the microsecond the log stores (not of the Date's binary
        // fraction: .001000 as a Double of seconds is .000999…, which printed as .000).
        let totalMs = printedMillisecond(date)
        // 0000-01-01T00:00:00Z ..< 10000-01-01T00:00:00Z, in milliseconds since 1970.
        guard totalMs >= -62_167_219_200_000, totalMs < 253_402_300_800_000 else { return false }
        var days = totalMs / 86_400_000
        var msOfDay = totalMs % 86_400_000
        if msOfDay < 0 { msOfDay += 86_400_000; days -= 1 }
        let civil = HTTPDate.civil(fromDays: Int(days))
        let (year, month, day) = (Int64(civil.year), Int64(civil.month), Int64(civil.day))
        func two(_ v: Int64) {
            text.append(UInt8(ascii: "0") + UInt8(v / 10))
            text.append(UInt8(ascii: "0") + UInt8(v % 10))
        }
        two(year / 100); two(year % 100); text.append(UInt8(ascii: "-")); two(month); text.append(UInt8(ascii: "-")); two(day)
        text.append(UInt8(ascii: "T"))
        two(msOfDay / 3_600_000); text.append(UInt8(ascii: ":"))
        two(msOfDay / 60_000 % 60); text.append(UInt8(ascii: ":"))
        two(msOfDay / 1000 % 60); text.append(UInt8(ascii: "."))
        text.append(UInt8(ascii: "0") + UInt8(msOfDay % 1000 / 100)); two(msOfDay % 100)
        text.append(UInt8(ascii: "Z"))
        return true
    }

    /// The JSON line `freshet dump --json` prints for a record it cannot read.
    public static func unreadableJSONLine(lsn: LSN, message: String) -> String {
        var writer = JSONWriter(capacity: 128)
        writer.object { o in
            o.field("error", string: message)
            o.field("kind", string: "unreadable")
            o.field("lsn", number: lsn.rawValue)
        }
        return writer.string
    }
}
