import Foundation

// Payload encodings of format version 1. Field tags are fixed forever; readers skip tags
// they do not know. docs/log-format.md lists every field.

extension Event {
    func encodedPayload() -> [UInt8] {
        var w = ByteWriter(capacity: encodedPayloadCapacity)
        encodePayload(into: &w)
        return w.bytes
    }

    /// About the size of the payload: its rows' bytes plus a little, so one allocation holds it.
    var encodedPayloadCapacity: Int {
        switch self {
        case .fetched(let f): f.rows.reduce(256) { $0 + $1.json.count + $1.id.utf8.count + 12 }
        case .changed(let c), .localWrite(let c):
            c.ops.reduce(64) { total, op in
                switch op {
                case .upsert(let row): total + row.json.count + row.id.utf8.count + 16
                case .delete(let id): total + id.utf8.count + 16
                }
            }
        default: 128
        }
    }

    /// Appends the payload (the bytes ``encodedPayload()`` returns) to `w`.
    func encodePayload(into w: inout ByteWriter) {
        switch self {
        case .fetched(let f):
            switch f.placement {
            case .replace: w.field(1, uint: 1)
            case .page(let index, let isLast):
                w.field(1, uint: 2)
                w.field(2, uint: UInt64(clamping: index))
                w.field(3, bool: isLast)
            case .upsert: w.field(1, uint: 3)
            }
            w.fields(4, rows: f.rows, slices: f.slices)
            w.field(5) { $0.encode(f.response) }
            w.field(6, string: f.nextCursor)
            if let basis = f.basisLSN { w.field(7, uint: basis.rawValue) }
            if f.rowsWithheld { w.field(8, bool: true) }
            if let p = f.readPolicy { w.field(9) { p.encode(into: &$0) } }
        case .notModified(let n):
            w.field(1) { $0.encode(n.response) }
            if let page = n.page { w.field(2, uint: UInt64(clamping: page)) }
            if let basis = n.basisLSN { w.field(3, uint: basis.rawValue) }
            if let p = n.readPolicy { w.field(4) { p.encode(into: &$0) } }
        case .fetchFailed(let f):
            w.field(1, string: f.url)
            w.field(2, string: f.reason)
            if let status = f.status { w.field(3, uint: UInt64(clamping: status)) }
            w.field(4, string: f.message)
            w.field(5, uint: UInt64(clamping: f.attempt))
            w.field(6, int: f.durationMicros)
            if let p = f.readPolicy { w.field(7) { p.encode(into: &$0) } }
            if let page = f.page { w.field(8, uint: UInt64(clamping: page)) }
        case .changed(let c), .localWrite(let c):
            for op in c.ops {
                w.field(1) { m in
                    switch op {
                    case .upsert(let row):
                        m.field(1, uint: 1)
                        m.field(2, string: row.id)
                        m.field(3, data: row.json)
                    case .delete(let id):
                        m.field(1, uint: 2)
                        m.field(2, string: id)
                    }
                }
            }
            if let origin = c.origin {
                w.field(2) { m in
                    m.field(1, string: origin.source)
                    m.field(2, string: origin.eventID)
                }
            }
        case .invalidated(let i):
            w.field(1, string: i.reason)
        case .mutationProposed(let p): w.encode(p)
        case .mutationConfirmed(let c): w.encode(c)
        case .mutationRolledBack(let r): w.encode(r)
        case .checkpoint(let c): w.encode(c)
        case .evicted(let e):
            w.field(1, int: e.unobservedMicros)
            w.field(2, int: e.gcTimeMicros)
        }
    }

    /// A page index read from disk: 0 ... ``Keys/maxPageIndex``, else the record is malformed
    /// (a larger one could never have been appended).
    private static func pageIndex(_ value: UInt64) throws(FormatError) -> Int {
        guard value <= UInt64(Keys.maxPageIndex) else {
            throw FormatError(reason: "page index \(value) is out of range 0 ... \(Keys.maxPageIndex)")
        }
        return Int(value)
    }

    static func decode(kind: EventKind, payload: [UInt8]) throws -> Event {
        try payload.withUnsafeBytes { try decode(kind: kind, payload: ByteReader($0)) }
    }

    /// Decodes a payload read in place from its record's bytes (no copy).
    static func decode(kind: EventKind, payload: ByteReader) throws -> Event {
        var r = payload
        switch kind {
        case .fetched:
            var placementCode: UInt64 = 0
            var index = 0
            var isLast = false
            var rows: [Row] = []
            var response: ResponseInfo?
            var next: String?
            var basis: LSN?
            var withheld = false
            var readPolicy: ReadPolicy?
            try r.fields { tag, v in
                switch tag {
                case 9: readPolicy = try ReadPolicy.decodeField(v.message)
                case 7: basis = LSN(try v.uint())
                case 8: withheld = try v.bool()
                case 1: placementCode = try v.uint()
                case 2: index = try pageIndex(v.uint())
                case 3: isLast = try v.bool()
                case 4: rows.append(try Row.decodeField(v.message))
                case 5: response = try ResponseInfo.decodeField(v.message)
                case 6: next = try v.string()
                default: break
                }
            }
            let placement: Fetched.Placement
            switch placementCode {
            case 1: placement = .replace
            case 2: placement = .page(index: index, isLast: isLast)
            case 3: placement = .upsert
            default: throw FormatError(reason: "fetched event has unknown placement \(placementCode)")
            }
            guard let response else { throw FormatError(reason: "fetched event has no response field") }
            return .fetched(Fetched(placement: placement, rows: rows, response: response, nextCursor: next, basisLSN: basis, rowsWithheld: withheld, readPolicy: readPolicy))
        case .notModified:
            var response: ResponseInfo?
            var page: Int?
            var basis: LSN?
            var readPolicy: ReadPolicy?
            try r.fields { tag, v in
                switch tag {
                case 1: response = try ResponseInfo.decodeField(v.message)
                case 2: page = try pageIndex(v.uint())
                case 3: basis = LSN(try v.uint())
                case 4: readPolicy = try ReadPolicy.decodeField(v.message)
                default: break
                }
            }
            guard let response else { throw FormatError(reason: "notModified event has no response field") }
            return .notModified(NotModified(response: response, page: page, basisLSN: basis, readPolicy: readPolicy))
        case .fetchFailed:
            var f = FetchFailed(url: "", reason: "", message: "", attempt: 1)
            try r.fields { tag, v in
                switch tag {
                case 1: f.url = try v.string()
                case 2: f.reason = try v.string()
                case 3: f.status = Int(clamping: try v.uint())
                case 4: f.message = try v.string()
                case 5: f.attempt = Int(clamping: try v.uint())
                case 6: f.durationMicros = try v.int()
                case 7: f.readPolicy = try ReadPolicy.decodeField(v.message)
                case 8: f.page = try pageIndex(v.uint())
                default: break
                }
            }
            return .fetchFailed(f)
        case .changed, .localWrite:
            var ops: [RowChanges.Op] = []
            var origin: PushOrigin?
            try r.fields { tag, v in
                if tag == 2 {
                    origin = try PushOrigin.decodeField(v.message)
                    return
                }
                guard tag == 1 else { return }
                var op: UInt64 = 0
                var id: String?
                var json = Data()
                var m = v.message
                try m.fields { t, x in
                    switch t {
                    case 1: op = try x.uint()
                    case 2: id = try x.string()
                    case 3: json = x.data
                    default: break
                    }
                }
                guard let id else { throw FormatError(reason: "row op has no id") }
                switch op {
                case 1: ops.append(.upsert(Row(id: id, json: json)))
                case 2: ops.append(.delete(id: id))
                default: throw FormatError(reason: "unknown row op \(op)")
                }
            }
            return kind == .changed ? .changed(RowChanges(ops, origin: origin)) : .localWrite(RowChanges(ops, origin: origin))
        case .invalidated:
            var reason: String?
            try r.fields { tag, v in
                if tag == 1 { reason = try v.string() }
            }
            return .invalidated(Invalidated(reason: reason))
        case .mutationProposed: return .mutationProposed(try decodeProposed(r))
        case .mutationConfirmed: return .mutationConfirmed(try decodeConfirmed(r))
        case .mutationRolledBack: return .mutationRolledBack(try decodeRolledBack(r))
        case .checkpoint: return .checkpoint(try Checkpoint.decode(r))
        case .evicted:
            var e = Evicted(unobservedMicros: 0, gcTimeMicros: 0)
            try r.fields { tag, v in
                switch tag {
                case 1: e.unobservedMicros = try v.int()
                case 2: e.gcTimeMicros = try v.int()
                default: break
                }
            }
            return .evicted(e)
        }
    }
}

extension ByteWriter {
    mutating func encode(_ row: Row) {
        field(1, string: row.id)
        field(2, data: row.json)
    }

    /// The same bytes as `field(tag) { $0.encode(row) }`, written in place: the message's
    /// length is computed first, so the row's bytes are copied once.
    mutating func field(_ tag: UInt64, row: Row) {
        // The ID's and the JSON's bytes are each reached once (a `String` and a `Data`
        // access per row was most of encoding a 1,000-row page).
        var id = row.id
        id.withUTF8 { id in
            row.json.withUnsafeBytes { json in
                raw(count: Self.rowHeaderLength(tag, id: id.count, json: json.count)) { out in
                    _ = Self.writeRowHeader(tag, id: UnsafeRawBufferPointer(id), json: json.count, into: out, at: 0)
                }
                // A large document is left to the caller, copied once into LMDB's page (round 9, W2b).
                if defersLargeData && json.count >= Self.deferredMinimum { raw(row.json) } else { raw(json) }
            }
        }
    }

    /// `field(tag, row:)` for each of `rows`, in order (the same bytes). Unless a row's JSON is
    /// to be deferred (``defersLargeData``), the rows' sizes are summed first and every row is
    /// written through one pointer into the buffer grown once: an `Array` append per varint and
    /// per part, the buffer doubling as it went, was most of encoding a 1,000-row page
    /// (docs/performance.md, round 10). With `slices` (the rows' JSON in one buffer) the JSON
    /// is read from it, not from each row's `Data` (round 11).
    mutating func fields(_ tag: UInt64, rows: [Row], slices: RowSlices? = nil) {
        if let slices {
            slices.withBytes { body, ranges in
                writeRows(tag, rows, jsonCount: { ranges[$0].count }, json: { i, write in write(UnsafeRawBufferPointer(rebasing: body[ranges[i]])) })
            }
        } else {
            writeRows(tag, rows, jsonCount: { rows[$0].json.count }, json: { i, write in rows[i].json.withUnsafeBytes(write) })
        }
    }

    /// ``fields(_:rows:slices:)``'s work, row `i`'s JSON being `jsonCount(i)` bytes that
    /// `json(i, write)` lends to `write`.
    @inline(__always)
    private mutating func writeRows(_ tag: UInt64, _ rows: [Row], jsonCount: (Int) -> Int, json: (Int, (UnsafeRawBufferPointer) -> Void) -> Void) {
        var total = 0
        for i in rows.indices {
            let count = jsonCount(i)
            if defersLargeData && count >= Self.deferredMinimum {
                for row in rows { field(tag, row: row) }
                return
            }
            total += Self.rowHeaderLength(tag, id: rows[i].id.utf8.count, json: count) + count
        }
        // The fields after the rows (the response, the cursor, the policy) fit the spare room.
        raw(count: total, spare: 1024) { out in
            var at = 0
            for i in rows.indices {
                var id = rows[i].id
                id.withUTF8 { id in
                    json(i) { json in
                        at = Self.writeRowHeader(tag, id: UnsafeRawBufferPointer(id), json: json.count, into: out, at: at)
                        UnsafeMutableRawBufferPointer(rebasing: out[at..<(at + json.count)]).copyMemory(from: json)
                        at += json.count
                    }
                }
            }
            precondition(at == out.count, "rows encoded into \(at) bytes, \(out.count) counted")
        }
    }

    /// The length of a row field up to its JSON's bytes: the tag, the message's length, the
    /// ID field (tag 1) and the JSON field's tag (2) and length.
    private static func rowHeaderLength(_ tag: UInt64, id: Int, json: Int) -> Int {
        let message = 2 + varintLength(UInt64(id)) + id + varintLength(UInt64(json)) + json
        return varintLength(tag) + varintLength(UInt64(message)) + message - json
    }

    /// Writes a row field up to its JSON's bytes (``rowHeaderLength(_:id:json:)`` of them)
    /// into `out` from `at`; returns the offset where the JSON goes.
    private static func writeRowHeader(_ tag: UInt64, id: UnsafeRawBufferPointer, json: Int, into out: UnsafeMutableRawBufferPointer, at: Int) -> Int {
        let message = 2 + varintLength(UInt64(id.count)) + id.count + varintLength(UInt64(json)) + json
        var at = writeVarint(tag, into: out, at: at)
        at = writeVarint(UInt64(message), into: out, at: at)
        at = writeVarint(1, into: out, at: at)
        at = writeVarint(UInt64(id.count), into: out, at: at)
        UnsafeMutableRawBufferPointer(rebasing: out[at..<(at + id.count)]).copyMemory(from: id)
        at += id.count
        at = writeVarint(2, into: out, at: at)
        return writeVarint(UInt64(json), into: out, at: at)
    }

    mutating func encode(_ r: ResponseInfo) {
        field(1, string: r.url)
        field(2, uint: UInt64(clamping: r.status))
        field(3, string: r.etag)
        field(4, string: r.lastModified)
        field(5, string: r.cacheControl)
        field(6, string: r.date)
        field(7, string: r.age)
        field(8, string: r.expires)
        field(9, int: r.durationMicros)
        field(10, uint: UInt64(clamping: r.responseBytes))
        field(11, uint: UInt64(clamping: r.requestBytes))
    }
}

extension Row {
    static func decodeField(_ reader: ByteReader) throws -> Row {
        var r = reader
        var id: String?
        var json = Data()
        try r.fields { tag, v in
            switch tag {
            case 1: id = try v.string()
            case 2: json = v.data
            default: break
            }
        }
        guard let id else { throw FormatError(reason: "row has no id") }
        return Row(id: id, json: json)
    }
}

extension PushOrigin {
    static func decodeField(_ reader: ByteReader) throws -> PushOrigin {
        var r = reader
        var source: String?
        var eventID: String?
        try r.fields { tag, v in
            switch tag {
            case 1: source = try v.string()
            case 2: eventID = try v.string()
            default: break
            }
        }
        guard let source, let eventID else { throw FormatError(reason: "push origin lacks its source or event ID") }
        return PushOrigin(source: source, eventID: eventID)
    }
}

extension ResponseInfo {
    static func decodeField(_ reader: ByteReader) throws -> ResponseInfo {
        var r = reader
        var info = ResponseInfo(url: "", status: 0)
        try r.fields { tag, v in
            switch tag {
            case 1: info.url = try v.string()
            case 2: info.status = Int(clamping: try v.uint())
            case 3: info.etag = try v.string()
            case 4: info.lastModified = try v.string()
            case 5: info.cacheControl = try v.string()
            case 6: info.date = try v.string()
            case 7: info.age = try v.string()
            case 8: info.expires = try v.string()
            case 9: info.durationMicros = try v.int()
            case 10: info.responseBytes = Int(clamping: try v.uint())
            case 11: info.requestBytes = Int(clamping: try v.uint())
            default: break
            }
        }
        return info
    }
}
