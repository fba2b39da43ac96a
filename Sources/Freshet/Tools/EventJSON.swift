import Foundation
import FreshetHTTP

/// The JSON form of an event's fields, as `freshet export` writes them and `freshet import`
/// reads them back (docs/log-format.md §13). Field names are the Swift property names; absent
/// optionals are left out; row JSON and bodies are kept as strings so their bytes survive.
enum EventJSON {
    // MARK: Writing

    static func json(_ event: Event, redaction: Redaction) -> JSONValue {
        switch event {
        case .fetched(let f):
            var o: [(String, JSONValue)] = []
            switch f.placement {
            case .replace: o.append(("placement", .string("replace")))
            case .upsert: o.append(("placement", .string("upsert")))
            case .page(let index, let isLast):
                o += [("placement", .string("page")), ("page", .int(Int64(index))), ("isLastPage", .bool(isLast))]
            }
            o.append(("rows", .array(f.rows.map { row($0, redaction) })))
            o.append(("response", response(f.response)))
            if let n = f.nextCursor { o.append(("nextCursor", .string(n))) }
            if let b = f.basisLSN { o.append(("basisLSN", .uint(b.rawValue))) }
            if f.rowsWithheld { o.append(("rowsWithheld", .bool(true))) }
            return .object(o)
        case .notModified(let n):
            var o: [(String, JSONValue)] = [("response", response(n.response))]
            if let p = n.page { o.append(("page", .int(Int64(p)))) }
            if let b = n.basisLSN { o.append(("basisLSN", .uint(b.rawValue))) }
            return .object(o)
        case .fetchFailed(let f):
            var o: [(String, JSONValue)] = [("url", .string(f.url)), ("reason", .string(f.reason))]
            if let s = f.status { o.append(("status", .int(Int64(s)))) }
            o += [("message", .string(f.message)), ("attempt", .int(Int64(f.attempt)))]
            if let d = f.durationMicros { o.append(("durationMicros", .int(d))) }
            return .object(o)
        case .changed(let c), .localWrite(let c):
            return .object([("ops", .array(c.ops.map { op in
                switch op {
                case .upsert(let r): .object([("op", .string("upsert")), ("row", row(r, redaction))])
                case .delete(let id): .object([("op", .string("delete")), ("id", .string(id))])
                }
            }))])
        case .invalidated(let i):
            return .object(i.reason.map { [("reason", .string($0))] } ?? [])
        case .mutationProposed(let p):
            let m = p.mutation
            var request: [(String, JSONValue)] = [("method", .string(m.request.method.rawValue)), ("path", .string(m.request.path)),
                                                  ("headers", .object(m.request.headers.sorted { $0.key < $1.key }.map { ($0.key, .string(redaction.header($0.key, $0.value))) }))]
            if let body = m.request.body { request += bytes("body", redaction.json(body)) }
            let confirmation: JSONValue = switch m.confirmation {
            case .none: .object([("rule", .string("none"))])
            case .responseRow(let c, let p, let f): .object([("rule", .string("responseRow")), ("collection", .string(c)), ("provisionalID", .string(p)), ("idField", .string(f))])
            }
            return .object([
                ("mutationID", .string(p.id.description)), ("name", .string(m.name)), ("queue", .string(m.queue)),
                ("ops", .array(m.ops.map { op in
                    switch op.change {
                    case .upsert(let r): .object([("collection", .string(op.collection)), ("op", .string("upsert")), ("row", row(r, redaction))])
                    case .delete(let id): .object([("collection", .string(op.collection)), ("op", .string("delete")), ("id", .string(id))])
                    }
                })),
                ("request", .object(request)), ("invalidates", .array(m.invalidates.map(JSONValue.string))), ("confirmation", confirmation),
            ])
        case .mutationConfirmed(let c):
            return .object([
                ("mutationID", .string(c.id.description)), ("status", .int(Int64(c.status))),
                ("rows", .array(c.rows.map { .object([("collection", .string($0.collection)), ("row", row($0.row, redaction))]) })),
                ("idMappings", .array(c.idMappings.map { .object([("collection", .string($0.collection)), ("provisionalID", .string($0.provisionalID)), ("serverID", .string($0.serverID))]) })),
                ("invalidates", .array(c.invalidates.map(JSONValue.string))), ("affected", .array(c.affected.map(JSONValue.string))),
            ])
        case .mutationRolledBack(let r):
            var o: [(String, JSONValue)] = [("mutationID", .string(r.id.description))]
            if let s = r.status { o.append(("status", .int(Int64(s)))) }
            o.append(("reason", .string(r.reason)))
            if !r.body.isEmpty { o += bytes("body", redaction.json(r.body)) }
            o.append(("affected", .array(r.affected.map(JSONValue.string))))
            return .object(o)
        }
    }

    private static func row(_ row: Row, _ redaction: Redaction) -> JSONValue {
        .object([("id", .string(row.id))] + bytes("json", redaction.json(row.json)))
    }

    /// `key: "text"` for UTF-8 bytes, `keyBase64: "…"` otherwise.
    private static func bytes(_ key: String, _ data: Data) -> [(String, JSONValue)] {
        if let text = String(validating: data, as: UTF8.self) { return [(key, .string(text))] }
        return [(key + "Base64", .string(data.base64EncodedString()))]
    }

    private static func response(_ r: ResponseInfo) -> JSONValue {
        var o: [(String, JSONValue)] = [("url", .string(r.url)), ("status", .int(Int64(r.status)))]
        for (k, v) in [("etag", r.etag), ("lastModified", r.lastModified), ("cacheControl", r.cacheControl), ("date", r.date), ("age", r.age), ("expires", r.expires)] {
            if let v { o.append((k, .string(v))) }
        }
        o += [("durationMicros", .int(r.durationMicros)), ("responseBytes", .int(Int64(r.responseBytes))), ("requestBytes", .int(Int64(r.requestBytes)))]
        return .object(o)
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
                                          rowsWithheld: try o.optionalBool("rowsWithheld") ?? false))
        case .notModified:
            return .notModified(Event.NotModified(response: try response(o.object("response")), page: try o.optionalInt("page"), basisLSN: try o.optionalUInt("basisLSN").map { LSN($0) }))
        case .fetchFailed:
            return .fetchFailed(Event.FetchFailed(url: try o.string("url"), reason: try o.string("reason"), status: try o.optionalInt("status"), message: try o.string("message"),
                                                  attempt: try o.int("attempt"), durationMicros: try o.optionalInt("durationMicros").map(Int64.init)))
        case .changed, .localWrite:
            var ops: [Event.RowChanges.Op] = []
            for op in try o.objects("ops") {
                switch try op.string("op") {
                case "upsert": ops.append(.upsert(try row(op.object("row"))))
                case "delete": ops.append(.delete(id: try op.string("id")))
                case let other: throw op.error("op \(other.debugDescription) is not upsert or delete")
                }
            }
            return kind == .changed ? .changed(Event.RowChanges(ops)) : .localWrite(Event.RowChanges(ops))
        case .invalidated:
            return .invalidated(Event.Invalidated(reason: try o.optionalString("reason")))
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
            throw ToolError(.unknownKind, "line \(o.line): checkpoint records are reserved; this Freshet writes and reads none")
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
