import Foundation
import FreshetHTTP

extension Event {
    /// An optimistic write, committed before its request is sent. While unresolved it is
    /// part of the pending overlay of every collection its ops touch.
    public struct MutationProposed: Sendable, Hashable {
        public var id: MutationID
        public var mutation: Mutation

        public init(id: MutationID, mutation: Mutation) {
            self.id = id
            self.mutation = mutation
        }
    }

    /// The server accepted a mutation: its overlay goes, and the server's rows join the base
    /// state in the same transaction (so every emission holds exactly one copy of the row).
    public struct MutationConfirmed: Sendable, Hashable {
        /// A provisional row ID and the ID the server gave the row.
        public struct IDMapping: Sendable, Hashable {
            public var collection: String
            public var provisionalID: String
            public var serverID: String
            public init(collection: String, provisionalID: String, serverID: String) {
                self.collection = collection
                self.provisionalID = provisionalID
                self.serverID = serverID
            }
        }

        public var id: MutationID
        /// The HTTP status of the server's answer.
        public var status: Int
        /// The server's rows, by collection, upserted into the base state.
        public var rows: [(collection: String, row: Row)]
        public var idMappings: [IDMapping]
        /// Collections marked stale by this confirmation.
        public var invalidates: [String]
        /// Every collection whose overlay this mutation was part of.
        public var affected: [String]

        public init(id: MutationID, status: Int, rows: [(collection: String, row: Row)] = [], idMappings: [IDMapping] = [], invalidates: [String] = [], affected: [String] = []) {
            self.id = id
            self.status = status
            self.rows = rows
            self.idMappings = idMappings
            self.invalidates = invalidates
            self.affected = affected
        }

        public static func == (a: Self, b: Self) -> Bool {
            a.id == b.id && a.status == b.status && a.idMappings == b.idMappings && a.invalidates == b.invalidates && a.affected == b.affected
                && a.rows.count == b.rows.count && zip(a.rows, b.rows).allSatisfy { $0.collection == $1.collection && $0.row == $1.row }
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(id)
            hasher.combine(status)
            for r in rows { hasher.combine(r.collection); hasher.combine(r.row) }
        }
    }

    /// The server rejected a mutation (a 4xx other than 408 and 429), or it depended on one
    /// that was: its overlay goes and the rows return to the server's version.
    public struct MutationRolledBack: Sendable, Hashable {
        public var id: MutationID
        /// The HTTP status, when the server answered.
        public var status: Int?
        /// One line for a person.
        public var reason: String
        /// The server's response body (at most 64 KiB of it).
        public var body: Data
        /// Every collection whose overlay this mutation was part of.
        public var affected: [String]

        public init(id: MutationID, status: Int?, reason: String, body: Data = Data(), affected: [String] = []) {
            self.id = id
            self.status = status
            self.reason = reason
            self.body = body.count > 65_536 ? body.prefix(65_536) : body
            self.affected = affected
        }
    }

    /// Every collection whose projection this event may change (the record's own first).
    func affectedCollections(primary: String) -> [String] {
        // A checkpoint changes no collection: it restates the state through an earlier LSN.
        if case .checkpoint = self { return [] }
        var names = [primary]
        switch self {
        case .mutationProposed(let p): names += p.mutation.ops.map(\.collection)
        case .mutationConfirmed(let c): names += c.affected + c.rows.map(\.collection) + c.invalidates
        case .mutationRolledBack(let r): names += r.affected
        default: break
        }
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }
}

// MARK: Payload encodings (docs/log-format.md)

extension ByteWriter {
    mutating func encode(_ p: Event.MutationProposed) {
        field(1, bytes: p.id.bytes)
        field(2, string: p.mutation.name)
        field(3, string: p.mutation.queue)
        for op in p.mutation.ops {
            field(4) { m in
                m.field(1, string: op.collection)
                switch op.change {
                case .upsert(let row):
                    m.field(2, uint: 1)
                    m.field(3, string: row.id)
                    m.field(4, bytes: row.json)
                case .delete(let id):
                    m.field(2, uint: 2)
                    m.field(3, string: id)
                }
            }
        }
        field(5) { m in
            m.field(1, string: p.mutation.request.method.rawValue)
            m.field(2, string: p.mutation.request.path)
            for (name, value) in p.mutation.request.headers.sorted(by: { $0.key < $1.key }) {
                m.field(3) { h in
                    h.field(1, string: name)
                    h.field(2, string: value)
                }
            }
            if let body = p.mutation.request.body { m.field(4, bytes: body) }
        }
        for name in p.mutation.invalidates { field(6, string: name) }
        field(7) { m in
            switch p.mutation.confirmation {
            case .none: m.field(1, uint: 0)
            case .responseRow(let collection, let provisionalID, let idField):
                m.field(1, uint: 1)
                m.field(2, string: collection)
                m.field(3, string: provisionalID)
                m.field(4, string: idField)
            }
        }
    }

    mutating func encode(_ c: Event.MutationConfirmed) {
        field(1, bytes: c.id.bytes)
        field(2, uint: UInt64(clamping: c.status))
        for r in c.rows {
            field(3) { m in
                m.field(1, string: r.collection)
                m.field(2) { $0.encode(r.row) }
            }
        }
        for map in c.idMappings {
            field(4) { m in
                m.field(1, string: map.collection)
                m.field(2, string: map.provisionalID)
                m.field(3, string: map.serverID)
            }
        }
        for name in c.invalidates { field(5, string: name) }
        for name in c.affected { field(6, string: name) }
    }

    mutating func encode(_ r: Event.MutationRolledBack) {
        field(1, bytes: r.id.bytes)
        if let status = r.status { field(2, uint: UInt64(clamping: status)) }
        field(3, string: r.reason)
        if !r.body.isEmpty { field(4, bytes: r.body) }
        for name in r.affected { field(5, string: name) }
    }
}

extension Event {
    static func decodeProposed(_ reader: ByteReader) throws -> MutationProposed {
        var r = reader
        var id: MutationID?
        var name = ""
        var queue = "default"
        var ops: [Mutation.Op] = []
        var request = Mutation.Request(method: .get, path: "")
        var invalidates: [String] = []
        var confirmation: Mutation.Confirmation = .none
        try r.fields { tag, v in
            switch tag {
            case 1: id = try MutationID(bytes: v.bytes)
            case 2: name = try v.string()
            case 3: queue = try v.string()
            case 4:
                var collection = ""
                var kind: UInt64 = 0
                var rowID = ""
                var json = Data()
                var m = v.message
                try m.fields { t, x in
                    switch t {
                    case 1: collection = try x.string()
                    case 2: kind = try x.uint()
                    case 3: rowID = try x.string()
                    case 4: json = x.data
                    default: break
                    }
                }
                switch kind {
                case 1: ops.append(.upsert(Row(id: rowID, json: json), in: collection))
                case 2: ops.append(.delete(id: rowID, in: collection))
                default: throw FormatError(reason: "unknown mutation op \(kind)")
                }
            case 5:
                var method = "GET"
                var path = ""
                var headers: [String: String] = [:]
                var body: Data?
                var m = v.message
                try m.fields { t, x in
                    switch t {
                    case 1: method = try x.string()
                    case 2: path = try x.string()
                    case 3:
                        var h = x.message
                        var hn = ""
                        var hv = ""
                        try h.fields { ht, hx in
                            if ht == 1 { hn = try hx.string() } else if ht == 2 { hv = try hx.string() }
                        }
                        headers[hn] = hv
                    case 4: body = x.data
                    default: break
                    }
                }
                // Checked here so a malformed record is an error, not HTTPMethod's precondition failure.
                guard isToken(method) else { throw FormatError(reason: "bad request method \(method.debugDescription)") }
                request = Mutation.Request(method: HTTPMethod(rawValue: method), path: path, headers: headers, body: body)
            case 6: invalidates.append(try v.string())
            case 7:
                var kind: UInt64 = 0
                var collection = ""
                var provisional = ""
                var idField = "id"
                var m = v.message
                try m.fields { t, x in
                    switch t {
                    case 1: kind = try x.uint()
                    case 2: collection = try x.string()
                    case 3: provisional = try x.string()
                    case 4: idField = try x.string()
                    default: break
                    }
                }
                confirmation = kind == 1 ? .responseRow(collection: collection, provisionalID: provisional, idField: idField) : .none
            default: break
            }
        }
        guard let id else { throw FormatError(reason: "mutationProposed has no mutation ID") }
        return MutationProposed(id: id, mutation: Mutation(name: name, ops: ops, request: request, invalidates: invalidates, confirmation: confirmation, queue: queue))
    }

    static func decodeConfirmed(_ reader: ByteReader) throws -> MutationConfirmed {
        var r = reader
        var c = MutationConfirmed(id: MutationID(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))), status: 0)
        var sawID = false
        try r.fields { tag, v in
            switch tag {
            case 1:
                c.id = try MutationID(bytes: v.bytes)
                sawID = true
            case 2: c.status = Int(clamping: try v.uint())
            case 3:
                var collection = ""
                var row: Row?
                var m = v.message
                try m.fields { t, x in
                    if t == 1 { collection = try x.string() } else if t == 2 { row = try Row.decodeField(x.message) }
                }
                guard let row else { throw FormatError(reason: "confirmed row without a row") }
                c.rows.append((collection, row))
            case 4:
                var map = MutationConfirmed.IDMapping(collection: "", provisionalID: "", serverID: "")
                var m = v.message
                try m.fields { t, x in
                    switch t {
                    case 1: map.collection = try x.string()
                    case 2: map.provisionalID = try x.string()
                    case 3: map.serverID = try x.string()
                    default: break
                    }
                }
                c.idMappings.append(map)
            case 5: c.invalidates.append(try v.string())
            case 6: c.affected.append(try v.string())
            default: break
            }
        }
        guard sawID else { throw FormatError(reason: "mutationConfirmed has no mutation ID") }
        return c
    }

    static func decodeRolledBack(_ reader: ByteReader) throws -> MutationRolledBack {
        var r = reader
        var id: MutationID?
        var status: Int?
        var reason = ""
        var body = Data()
        var affected: [String] = []
        try r.fields { tag, v in
            switch tag {
            case 1: id = try MutationID(bytes: v.bytes)
            case 2: status = Int(clamping: try v.uint())
            case 3: reason = try v.string()
            case 4: body = v.data
            case 5: affected.append(try v.string())
            default: break
            }
        }
        guard let id else { throw FormatError(reason: "mutationRolledBack has no mutation ID") }
        return MutationRolledBack(id: id, status: status, reason: reason, body: body, affected: affected)
    }
}

/// RFC 9110 §5.6.2 `token`: one or more of ALPHA, DIGIT and ``!#$%&'*+-.^_`|~``.
private func isToken(_ text: String) -> Bool {
    let extra = Set("!#$%&'*+-.^_`|~".utf8)
    return !text.isEmpty && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || extra.contains($0) }
}
