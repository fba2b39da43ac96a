import Foundation
import FreshetHTTP

/// The JSON form of an event's fields, as `freshet export` writes them and `freshet import`
/// reads them back (docs/log-format.md §13). Field names are the Swift property names; absent
/// optionals are left out; row JSON, bodies and a checkpoint's keys and values are kept as
/// strings (or Base64) so their bytes survive.
enum EventJSON {
    // MARK: Writing

    static func write(_ event: Event, redaction: Redaction, into w: inout JSONWriter) {
        w.object { o in
            switch event {
            case .checkpoint(let c):
                o.field("throughLSN", number: c.throughLSN.rawValue)
                o.field("throughMicros", number: ByteWriter.micros(c.throughTime))
                o.field("keptLSNs") { $0.array { a in for lsn in c.keptLSNs { a.element { $0.number(lsn.rawValue) } } } }
                o.field("removedCount", number: c.removedCount)
                o.field("entries") { w in
                    w.array { a in
                        for entry in c.entries {
                            a.element { $0.object { e in checkpointEntry(entry, redaction, into: &e) } }
                        }
                    }
                }
                if let policies = c.policies {
                    o.field("policies") { w in
                        w.array { a in
                            for p in policies {
                                a.element {
                                    $0.object { e in
                                        e.field("collection", string: p.collection)
                                        e.field("lsn", number: p.lsn.rawValue)
                                        e.field("readPolicy") { readPolicy(p.policy, into: &$0) }
                                    }
                                }
                            }
                        }
                    }
                }
            case .fetched(let f):
                switch f.placement {
                case .replace: o.field("placement", string: "replace")
                case .upsert: o.field("placement", string: "upsert")
                case .page(let index, let isLast):
                    o.field("placement", string: "page")
                    o.field("page", number: index)
                    o.field("isLastPage", bool: isLast)
                }
                o.field("rows") { $0.array { a in for r in f.rows { a.element { row(r, redaction, into: &$0) } } } }
                o.field("response") { response(f.response, into: &$0) }
                o.field("nextCursor", string: f.nextCursor)
                if let b = f.basisLSN { o.field("basisLSN", number: b.rawValue) }
                if f.rowsWithheld { o.field("rowsWithheld", bool: true) }
                if let p = f.readPolicy { o.field("readPolicy") { readPolicy(p, into: &$0) } }
            case .notModified(let n):
                o.field("response") { response(n.response, into: &$0) }
                if let p = n.page { o.field("page", number: p) }
                if let b = n.basisLSN { o.field("basisLSN", number: b.rawValue) }
                if let p = n.readPolicy { o.field("readPolicy") { readPolicy(p, into: &$0) } }
            case .fetchFailed(let f):
                o.field("url", string: f.url)
                if let p = f.page { o.field("page", number: p) }
                o.field("reason", string: f.reason)
                if let s = f.status { o.field("status", number: s) }
                o.field("message", string: f.message)
                o.field("attempt", number: f.attempt)
                if let d = f.durationMicros { o.field("durationMicros", number: d) }
                if let p = f.readPolicy { o.field("readPolicy") { readPolicy(p, into: &$0) } }
            case .changed(let c), .localWrite(let c):
                o.field("ops") { w in
                    w.array { a in
                        for op in c.ops {
                            a.element { e in
                                e.object { item in
                                    switch op {
                                    case .upsert(let r): item.field("op", string: "upsert"); item.field("row") { row(r, redaction, into: &$0) }
                                    case .delete(let id): item.field("op", string: "delete"); item.field("id", string: id)
                                    }
                                }
                            }
                        }
                    }
                }
                if let origin = c.origin {
                    o.field("origin") { $0.object { item in
                        item.field("source", string: origin.source)
                        item.field("eventID", string: origin.eventID)
                    } }
                }
            case .invalidated(let i):
                o.field("reason", string: i.reason)
            case .evicted(let e):
                o.field("unobservedMicros", number: e.unobservedMicros)
                o.field("gcTimeMicros", number: e.gcTimeMicros)
            case .mutationProposed(let p):
                let m = p.mutation
                o.field("mutationID", string: p.id.description)
                o.field("name", string: m.name)
                o.field("queue", string: m.queue)
                o.field("ops") { w in
                    w.array { a in
                        for op in m.ops {
                            a.element { e in
                                e.object { item in
                                    item.field("collection", string: op.collection)
                                    switch op.change {
                                    case .upsert(let r): item.field("op", string: "upsert"); item.field("row") { row(r, redaction, into: &$0) }
                                    case .delete(let id): item.field("op", string: "delete"); item.field("id", string: id)
                                    }
                                }
                            }
                        }
                    }
                }
                o.field("request") { w in
                    w.object { r in
                        r.field("method", string: m.request.method.rawValue)
                        r.field("path", string: m.request.path)
                        r.field("headers") { w in
                            w.object { h in
                                for (name, value) in m.request.headers.sorted(by: { $0.key < $1.key }) { h.field(name, string: redaction.header(name, value)) }
                            }
                        }
                        if let body = m.request.body { bytes("body", redaction.json(body), into: &r) }
                    }
                }
                o.field("invalidates") { $0.array(strings: m.invalidates) }
                o.field("confirmation") { w in
                    w.object { c in
                        switch m.confirmation {
                        case .none: c.field("rule", string: "none")
                        case .responseRow(let collection, let provisional, let idField):
                            c.field("rule", string: "responseRow")
                            c.field("collection", string: collection)
                            c.field("provisionalID", string: provisional)
                            c.field("idField", string: idField)
                        }
                    }
                }
            case .mutationConfirmed(let c):
                o.field("mutationID", string: c.id.description)
                o.field("status", number: c.status)
                o.field("rows") { w in
                    w.array { a in
                        for r in c.rows {
                            a.element { $0.object { item in item.field("collection", string: r.collection); item.field("row") { row(r.row, redaction, into: &$0) } } }
                        }
                    }
                }
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
                o.field("affected") { $0.array(strings: c.affected) }
            case .mutationRolledBack(let r):
                o.field("mutationID", string: r.id.description)
                if let s = r.status { o.field("status", number: s) }
                o.field("reason", string: r.reason)
                if !r.body.isEmpty { bytes("body", redaction.json(r.body), into: &o) }
                o.field("affected") { $0.array(strings: r.affected) }
            }
        }
    }

    /// `{"database": name, "key"|"keyBase64", "value"|"valueBase64"}`. A `rows` value
    /// (`ID length ‖ ID ‖ JSON`) gets its JSON redacted like any row; a value whose row ID
    /// does not decode is written as it is (a store that verifies has none).
    private static func checkpointEntry(_ entry: Event.Checkpoint.Entry, _ redaction: Redaction, into o: inout JSONWriter.ObjectWriter) {
        o.field("database", string: entry.table.databaseName)
        bytes("key", Data(entry.key), into: &o)
        var value = entry.value
        if entry.table == .rows, !redaction.fields.isEmpty {
            let id: String? = value.withUnsafeBytes { raw in
                do {
                    return try MaterializedState.decodeRowID(raw)
                } catch {
                    return nil
                }
            }
            if let id {
                let idBytes = Array(id.utf8)
                var lengthBytes = ByteWriter(capacity: 10)
                lengthBytes.varint(UInt64(idBytes.count))
                let json = Data(value[(lengthBytes.bytes.count + idBytes.count)...])
                value = MaterializedState.encodeRow(Row(id: id, json: redaction.json(json)))
            }
        }
        bytes("value", Data(value), into: &o)
    }

    private static func row(_ row: Row, _ redaction: Redaction, into w: inout JSONWriter) {
        w.object { o in
            o.field("id", string: row.id)
            bytes("json", redaction.json(row.json), into: &o)
        }
    }

    /// `key: "text"` for UTF-8 bytes, `keyBase64: "…"` otherwise. ASCII (most row JSON) is
    /// escaped straight from the bytes, without making a String first.
    private static func bytes(_ key: String, _ data: Data, into o: inout JSONWriter.ObjectWriter) {
        let written = data.withUnsafeBytes { raw -> Bool in
            guard String.isASCII(raw) else { return false }
            o.field(key) { $0.escapedString(raw.bindMemory(to: UInt8.self)) }
            return true
        }
        if written { return }
        if let text = String(validating: data, as: UTF8.self) {
            o.field(key, string: text)
        } else {
            o.field(key + "Base64", string: data.base64EncodedString())
        }
    }

    /// `{"freshness":"maxAge","maxAgeMicros":…,"maxAttempts":…,"baseDelayMicros":…,"maxDelayMicros":…,"jitterMillionths":…,"maxRetryAfterMicros":…}`.
    private static func readPolicy(_ p: ReadPolicy, into w: inout JSONWriter) {
        w.object { o in
            switch p.freshness {
            case .always: o.field("freshness", string: "always")
            case .maxAge(let d):
                o.field("freshness", string: "maxAge")
                o.field("maxAgeMicros", number: ReadPolicy.micros(d))
            case .http: o.field("freshness", string: "http")
            case .manual: o.field("freshness", string: "manual")
            }
            o.field("maxAttempts", number: p.retry.maxAttempts)
            o.field("baseDelayMicros", number: ReadPolicy.micros(p.retry.baseDelay))
            o.field("maxDelayMicros", number: ReadPolicy.micros(p.retry.maxDelay))
            o.field("jitterMillionths", number: Int64((p.retry.jitter * 1_000_000).rounded()))
            o.field("maxRetryAfterMicros", number: ReadPolicy.micros(p.retry.maxRetryAfter))
        }
    }

    private static func response(_ r: ResponseInfo, into w: inout JSONWriter) {
        w.object { o in
            o.field("url", string: r.url)
            o.field("status", number: r.status)
            for (k, v) in [("etag", r.etag), ("lastModified", r.lastModified), ("cacheControl", r.cacheControl), ("date", r.date), ("age", r.age), ("expires", r.expires)] {
                o.field(k, string: v)
            }
            o.field("durationMicros", number: r.durationMicros)
            o.field("responseBytes", number: r.responseBytes)
            o.field("requestBytes", number: r.requestBytes)
        }
    }

    // MARK: Reading

    static func event(kind: EventKind, _ o: JSONObject) throws(ToolError) -> Event {
        switch kind {
        case .fetched:
            let placement: Event.Fetched.Placement = switch try o.string("placement") {
            case "replace": .replace
            case "upsert": .upsert
            case "page": .page(index: try o.int("page"), isLast: try o.bool("isLastPage"))
            case let other: throw o.error("placement \(other.debugDescription) is not replace, upsert or page")
            }
            return .fetched(Event.Fetched(placement: placement, rows: try o.objects("rows").map(row), response: try response(o.object("response")),
                                          nextCursor: try o.optionalString("nextCursor"), basisLSN: try o.optionalUInt("basisLSN").map { LSN($0) },
                                          rowsWithheld: try o.optionalBool("rowsWithheld") ?? false, readPolicy: try readPolicy(o)))
        case .notModified:
            return .notModified(Event.NotModified(response: try response(o.object("response")), page: try o.optionalInt("page"), basisLSN: try o.optionalUInt("basisLSN").map { LSN($0) },
                                                    readPolicy: try readPolicy(o)))
        case .fetchFailed:
            return .fetchFailed(Event.FetchFailed(url: try o.string("url"), page: try o.optionalInt("page"), reason: try o.string("reason"), status: try o.optionalInt("status"), message: try o.string("message"),
                                                  attempt: try o.int("attempt"), durationMicros: try o.optionalInt("durationMicros").map(Int64.init),
                                                  readPolicy: try readPolicy(o)))
        case .changed, .localWrite:
            var ops: [Event.RowChanges.Op] = []
            for op in try o.objects("ops") {
                switch try op.string("op") {
                case "upsert": ops.append(.upsert(try row(op.object("row"))))
                case "delete": ops.append(.delete(id: try op.string("id")))
                case let other: throw op.error("op \(other.debugDescription) is not upsert or delete")
                }
            }
            var origin: PushOrigin?
            if o.fields["origin"] != nil, !(o.fields["origin"] is NSNull) {
                let from = try o.object("origin")
                origin = PushOrigin(source: try from.string("source"), eventID: try from.string("eventID"))
            }
            return kind == .changed ? .changed(Event.RowChanges(ops, origin: origin)) : .localWrite(Event.RowChanges(ops, origin: origin))
        case .invalidated:
            return .invalidated(Event.Invalidated(reason: try o.optionalString("reason")))
        case .evicted:
            let unobserved = try o.int("unobservedMicros")
            let gcTime = try o.int("gcTimeMicros")
            guard unobserved >= 0, gcTime >= 0 else { throw o.error("unobservedMicros and gcTimeMicros must not be negative") }
            return .evicted(Event.Evicted(unobservedMicros: Int64(unobserved), gcTimeMicros: Int64(gcTime)))
        case .mutationProposed:
            var ops: [Mutation.Op] = []
            for op in try o.objects("ops") {
                let collection = try op.string("collection")
                switch try op.string("op") {
                case "upsert": ops.append(.upsert(try row(op.object("row")), in: collection))
                case "delete": ops.append(.delete(id: try op.string("id"), in: collection))
                case let other: throw op.error("op \(other.debugDescription) is not upsert or delete")
                }
            }
            let r = try o.object("request")
            let method = try r.string("method")
            guard !method.isEmpty, method.utf8.allSatisfy(isTokenByte) else { throw r.error("method \(method.debugDescription) is not an HTTP method token") }
            var headers: [String: String] = [:]
            for (name, value) in try r.stringMap("headers") { headers[name] = value }
            let request = Mutation.Request(method: HTTPMethod(rawValue: method), path: try r.string("path"), headers: headers, body: try r.optionalBytes("body"))
            let c = try o.object("confirmation")
            let confirmation: Mutation.Confirmation = switch try c.string("rule") {
            case "none": .none
            case "responseRow": .responseRow(collection: try c.string("collection"), provisionalID: try c.string("provisionalID"), idField: try c.string("idField"))
            case let other: throw c.error("confirmation rule \(other.debugDescription) is not none or responseRow")
            }
            let mutation = Mutation(name: try o.string("name"), ops: ops, request: request, invalidates: try o.strings("invalidates"), confirmation: confirmation, queue: try o.string("queue"))
            return .mutationProposed(Event.MutationProposed(id: try mutationID(o), mutation: mutation))
        case .mutationConfirmed:
            let rows = try o.objects("rows").map { r throws(ToolError) in (collection: try r.string("collection"), row: try row(r.object("row"))) }
            let mappings = try o.objects("idMappings").map { m throws(ToolError) in
                Event.MutationConfirmed.IDMapping(collection: try m.string("collection"), provisionalID: try m.string("provisionalID"), serverID: try m.string("serverID"))
            }
            return .mutationConfirmed(Event.MutationConfirmed(id: try mutationID(o), status: try o.int("status"), rows: rows, idMappings: mappings,
                                                              invalidates: try o.strings("invalidates"), affected: try o.strings("affected")))
        case .mutationRolledBack:
            return .mutationRolledBack(Event.MutationRolledBack(id: try mutationID(o), status: try o.optionalInt("status"), reason: try o.string("reason"),
                                                                body: try o.optionalBytes("body") ?? Data(), affected: try o.strings("affected")))
        case .checkpoint:
            var kept: [LSN] = []
            for value in try o.uints("keptLSNs") { kept.append(LSN(value)) }
            var entries: [Event.Checkpoint.Entry] = []
            for e in try o.objects("entries") {
                let name = try e.string("database")
                guard let table = Event.Checkpoint.Table.allCases.first(where: { $0.databaseName == name }) else {
                    throw e.error("database \(name.debugDescription) is not one of \(Event.Checkpoint.Table.allCases.map(\.databaseName).joined(separator: ", "))")
                }
                guard let key = try e.optionalBytes("key"), !key.isEmpty else { throw e.error("an entry needs a non-empty key or keyBase64") }
                guard let value = try e.optionalBytes("value") else { throw e.error("an entry needs value or valueBase64") }
                if table == .rows {
                    guard key.count > 10 else { throw e.error("a rows key of \(key.count) bytes is too short (collection key ‖ 8-byte position)") }
                    let readable = value.withUnsafeBytes { raw in
                        do {
                            _ = try MaterializedState.decodeRowID(raw)
                            return true
                        } catch {
                            return false
                        }
                    }
                    guard readable else { throw e.error("a rows value must start with a row ID (length varint, UTF-8)") }
                }
                entries.append(Event.Checkpoint.Entry(table: table, key: [UInt8](key), value: [UInt8](value)))
            }
            let through = try o.int("throughLSN")
            guard through > 0 else { throw o.error("throughLSN must be a whole number from 1") }
            // Absent: a checkpoint written before policies were kept (payload version 1).
            var policies: [Event.Checkpoint.RecordedPolicy]?
            if o.fields["policies"] != nil, !(o.fields["policies"] is NSNull) {
                policies = []
                for p in try o.objects("policies") {
                    guard let policy = try readPolicy(p) else { throw p.error("a policy entry needs readPolicy") }
                    let lsn = try p.int("lsn")
                    guard lsn > 0 else { throw p.error("lsn must be a whole number from 1") }
                    policies?.append(Event.Checkpoint.RecordedPolicy(collection: try p.string("collection"), lsn: LSN(UInt64(lsn)), policy: policy))
                }
            }
            return .checkpoint(Event.Checkpoint(throughLSN: LSN(UInt64(through)), throughTime: Date(timeIntervalSince1970: Double(try o.int("throughMicros")) / 1_000_000),
                                                keptLSNs: kept, removedCount: try o.int("removedCount"), entries: entries, policies: policies))
        }
    }

    private static func row(_ o: JSONObject) throws(ToolError) -> Row {
        guard let json = try o.optionalBytes("json") else { throw o.error("a row needs json or jsonBase64") }
        // A row value is one JSON text (RFC 8259), as every fetch and local write stores it:
        // anything else would make `replay --json` write lines that are not JSON.
        let bytes = [UInt8](json)
        let problem: JSONError? = bytes.withUnsafeBufferPointer { buffer in
            do throws(JSONError) {
                _ = try JSONTape(parsing: buffer)
                return nil
            } catch {
                return error
            }
        }
        if let problem { throw o.error("json is not a JSON value (\(problem))") }
        return Row(id: try o.string("id"), json: json)
    }

    /// The optional `readPolicy` object of a fetched, notModified or fetchFailed event.
    private static func readPolicy(_ event: JSONObject) throws(ToolError) -> ReadPolicy? {
        guard event.fields["readPolicy"] != nil, !(event.fields["readPolicy"] is NSNull) else { return nil }
        let o = try event.object("readPolicy")
        let freshness: FreshnessPolicy = switch try o.string("freshness") {
        case "always": .always
        case "maxAge": .maxAge(.microseconds(try o.int("maxAgeMicros")))
        case "http": .http
        case "manual": .manual
        case let other: throw o.error("freshness \(other.debugDescription) is not always, maxAge, http or manual")
        }
        var retry = Configuration.RetryPolicy()
        retry.maxAttempts = try o.int("maxAttempts")
        retry.baseDelay = .microseconds(try o.int("baseDelayMicros"))
        retry.maxDelay = .microseconds(try o.int("maxDelayMicros"))
        retry.jitter = Double(try o.int("jitterMillionths")) / 1_000_000
        retry.maxRetryAfter = .microseconds(try o.int("maxRetryAfterMicros"))
        return ReadPolicy(freshness: freshness, retry: retry)
    }

    private static func response(_ o: JSONObject) throws(ToolError) -> ResponseInfo {
        ResponseInfo(url: try o.string("url"), status: try o.int("status"), etag: try o.optionalString("etag"), lastModified: try o.optionalString("lastModified"),
                     cacheControl: try o.optionalString("cacheControl"), date: try o.optionalString("date"), age: try o.optionalString("age"),
                     expires: try o.optionalString("expires"), durationMicros: Int64(try o.int("durationMicros")),
                     responseBytes: try o.int("responseBytes"), requestBytes: try o.int("requestBytes"))
    }

    private static func mutationID(_ o: JSONObject) throws(ToolError) -> MutationID {
        let text = try o.string("mutationID")
        guard let uuid = UUID(uuidString: text) else { throw o.error("mutationID \(text.debugDescription) is not a UUID") }
        return MutationID(uuid)
    }

    /// RFC 9110 §5.6.2 `tchar`.
    private static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(b)
        }
    }
}
