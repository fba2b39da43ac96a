import Foundation

/// Turns a response body into rows without building Foundation objects: the body is indexed
/// once by ``JSONTape`` (a validating RFC 8259 reader), each row's bytes are found on the tape
/// and written in the canonical row form (``JSONWriter/canonical(_:of:in:)``: minified, keys
/// sorted, strings and numbers as the server wrote them — docs/log-format.md "Row JSON"), so
/// the same server row always has the same bytes.
enum RowExtraction {
    struct Failure: Error, CustomStringConvertible {
        var description: String { reason }
        var reason: String
    }

    struct Result {
        /// The rows, in order. A canonical row's `json` is a slice of the response body (its
        /// indices are the body's, not 0-based): it is only read through `withUnsafeBytes`
        /// and `count` on the way to the log and the tables; rows that reach users (the
        /// volatile rows of a `no-store` response) are copied first (``Row/rebased``).
        var rows: [Row]
        /// The value of the paging key, when the resource pages by a body field: the next URL
        /// (``Resource/Paging/nextField(_:)``) or the cursor (``Resource/Paging/cursor(field:parameter:)``).
        var next: String?
        /// The rows' JSON as ranges of the body, when every row is a slice of it (already
        /// canonical); nil when any row had to be rewritten.
        var slices: RowSlices?
    }

    static func extract(_ body: Data, for resource: Resource) throws(Failure) -> Result {
        let outcome: Swift.Result<Result, Failure> = body.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            do throws(Failure) {
                return .success(try extract(bytes, count: body.count, prefix: body.prefix(40), body: body, for: resource))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    /// `body`: the bytes `bytes` points into, whose storage canonical rows share (see
    /// ``Result/rows``).
    private static func extract(_ bytes: UnsafeBufferPointer<UInt8>, count: Int, prefix: Data, body: Data, for resource: Resource) throws(Failure) -> Result {
        let tape: JSONTape
        do {
            tape = try JSONTape(parsing: bytes)
        } catch {
            let start = String(decoding: prefix, as: UTF8.self)
            throw Failure(reason: "body is not JSON (\(count) bytes, starting \(start.debugDescription)): \(error)")
        }
        let root = 0
        var next: String?
        if case .nextField(let key) = resource.paging {
            guard tape[root].kind == .object else { throw Failure(reason: "body is not a JSON object, so it has no \(key.debugDescription)") }
            switch tape.member(key, of: root, in: bytes).map({ ($0, tape[$0].kind) }) {
            case nil, (_, .null)?: next = nil
            case let (index, .string)?: next = tape.string(at: index, in: bytes)
            default: throw Failure(reason: "\(key.debugDescription) is neither a string nor null")
            }
        }
        if case .cursor(let key, _) = resource.paging {
            guard tape[root].kind == .object else { throw Failure(reason: "body is not a JSON object, so it has no cursor \(key.debugDescription)") }
            switch tape.member(key, of: root, in: bytes).map({ ($0, tape[$0].kind) }) {
            case nil, (_, .null)?: next = nil
            case let (index, .string)?:
                let cursor = tape.string(at: index, in: bytes)
                next = cursor.isEmpty ? nil : cursor
            case let (index, .number)?: next = tape.numberText(at: index, in: bytes)
            case let (_, kind)?: throw Failure(reason: "the cursor \(key.debugDescription) is \(kind), not a string, a number or null")
            }
        }
        let elements: [Int]
        switch resource.rows {
        case .array(let key):
            guard tape[root].kind == .object else { throw Failure(reason: "body is not a JSON object with \(key.debugDescription)") }
            guard let array = tape.member(key, of: root, in: bytes), tape[array].kind == .array else {
                throw Failure(reason: "body has no array under \(key.debugDescription)")
            }
            elements = tape.children(of: array)
        case .rootArray:
            guard tape[root].kind == .array else { throw Failure(reason: "body is not a JSON array") }
            elements = tape.children(of: root)
        case .document:
            elements = [root]
        }
        var rows: [Row] = []
        rows.reserveCapacity(elements.count)
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(elements.count)
        var allSlices = true
        var writer = JSONWriter(capacity: 1024)
        for (i, element) in elements.enumerated() {
            guard tape[element].kind == .object else { throw Failure(reason: "row \(i) is not a JSON object") }
            let id = try identity(of: element, tape, bytes, resource.id, index: i)
            let node = tape[element]
            if node.flag {
                // Already in canonical form (the parser checked): the row is the server's bytes,
                // a slice of the body sharing its storage (one retain, where a `Data` of its own
                // was two allocations and a copy per row: docs/performance.md, round 10).
                let range = Int(node.start)..<Int(node.end)
                rows.append(Row(id: id, json: body[(body.startIndex + range.lowerBound)..<(body.startIndex + range.upperBound)]))
                ranges.append(range)
                continue
            }
            allSlices = false
            writer.bytes.removeAll(keepingCapacity: true)
            writer.bytes.reserveCapacity(Int(node.end - node.start))
            writer.canonical(element, of: tape, in: bytes)
            rows.append(Row(id: id, json: Data(writer.bytes)))
        }
        return Result(rows: rows, next: next, slices: allSlices ? RowSlices(storage: body, ranges: ranges) : nil)
    }

    private static func identity(of object: Int, _ tape: JSONTape, _ bytes: UnsafeBufferPointer<UInt8>, _ rule: Resource.RowIdentity, index: Int) throws(Failure) -> String {
        switch rule {
        case .field(let key):
            if let value = tape.member(key, of: object, in: bytes) {
                switch tape[value].kind {
                case .string:
                    let s = tape.string(at: value, in: bytes)
                    if !s.isEmpty { return s }
                case .number:
                    if let n = integer(tape.numberText(at: value, in: bytes)) { return String(n) }
                default: break
                }
            }
            throw Failure(reason: "row \(index) has no string or integer \(key.debugDescription) to use as its ID")
        case .lastPathComponent(let key):
            guard let value = tape.member(key, of: object, in: bytes), tape[value].kind == .string else {
                throw Failure(reason: "row \(index) has no string \(key.debugDescription) to take its ID from")
            }
            let s = tape.string(at: value, in: bytes)
            guard let last = s.split(separator: "/").last(where: { !$0.isEmpty }) else {
                throw Failure(reason: "row \(index): \(key.debugDescription) = \(s.debugDescription) has no path component")
            }
            return String(last)
        }
    }

    /// A JSON number that is a whole number within `Int`'s range (`25`, `-3`, `25.0`, `2.5e1`),
    /// as JSONSerialization's `NSNumber` bridges to `Int`; otherwise nil.
    private static func integer(_ text: String) -> Int? {
        if let n = Int(text) { return n }
        guard let d = Double(text), d == d.rounded(), let n = Int(exactly: d) else { return nil }
        return n
    }
}
