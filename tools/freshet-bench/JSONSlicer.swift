/// Finds where JSON values start and end in a document, without building anything: the least
/// work that splits a fetched page into row byte ranges. The raw LMDB and SQLite engines use
/// it, so their rows are the server's bytes as they came (the fixtures are already minified
/// with sorted keys, so those are also the bytes Freshet's canonical rows must have).
///
/// It trusts its input to be JSON (the fixtures are): it does not validate.
enum JSONSlicer {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    typealias Bytes = UnsafeBufferPointer<UInt8>

    static func skipSpace(_ b: Bytes, _ i: Int) -> Int {
        var i = i
        while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
        return i
    }

    /// The index just after the value that starts at `i`.
    static func skipValue(_ b: Bytes, _ start: Int) throws(Failure) -> Int {
        var i = start
        guard i < b.count else { throw Failure(description: "value expected at \(i)") }
        switch b[i] {
        case UInt8(ascii: "\""):
            return try skipString(b, i)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            while i < b.count {
                switch b[i] {
                case UInt8(ascii: "\""):
                    i = try skipString(b, i)
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return i + 1 }
                default: break
                }
                i += 1
            }
            throw Failure(description: "unterminated container at \(start)")
        default:
            while i < b.count {
                switch b[i] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09: return i
                default: i += 1
                }
            }
            return i
        }
    }

    static func skipString(_ b: Bytes, _ start: Int) throws(Failure) -> Int {
        var i = start + 1
        while i < b.count {
            switch b[i] {
            case UInt8(ascii: "\\"): i += 2
            case UInt8(ascii: "\""): return i + 1
            default: i += 1
            }
        }
        throw Failure(description: "unterminated string at \(start)")
    }

    /// The members of the object in `range`: each key (without quotes) and value range.
    static func members(_ b: Bytes, _ range: Range<Int>) throws(Failure) -> [(key: Range<Int>, value: Range<Int>)] {
        var i = skipSpace(b, range.lowerBound)
        guard i < range.upperBound, b[i] == UInt8(ascii: "{") else { throw Failure(description: "object expected at \(i)") }
        i = skipSpace(b, i + 1)
        var out: [(key: Range<Int>, value: Range<Int>)] = []
        if b[i] == UInt8(ascii: "}") { return out }
        while true {
            let keyEnd = try skipString(b, i)
            let key = (i + 1)..<(keyEnd - 1)
            i = skipSpace(b, keyEnd)
            guard b[i] == UInt8(ascii: ":") else { throw Failure(description: "':' expected at \(i)") }
            let valueStart = skipSpace(b, i + 1)
            let valueEnd = try skipValue(b, valueStart)
            out.append((key, valueStart..<valueEnd))
            i = skipSpace(b, valueEnd)
            if b[i] == UInt8(ascii: "}") { return out }
            guard b[i] == UInt8(ascii: ",") else { throw Failure(description: "',' expected at \(i)") }
            i = skipSpace(b, i + 1)
        }
    }

    /// The element ranges of the array in `range`.
    static func elements(_ b: Bytes, _ range: Range<Int>) throws(Failure) -> [Range<Int>] {
        var i = skipSpace(b, range.lowerBound)
        guard i < range.upperBound, b[i] == UInt8(ascii: "[") else { throw Failure(description: "array expected at \(i)") }
        i = skipSpace(b, i + 1)
        var out: [Range<Int>] = []
        if b[i] == UInt8(ascii: "]") { return out }
        while true {
            let end = try skipValue(b, i)
            out.append(i..<end)
            i = skipSpace(b, end)
            if b[i] == UInt8(ascii: "]") { return out }
            guard b[i] == UInt8(ascii: ",") else { throw Failure(description: "',' expected at \(i)") }
            i = skipSpace(b, i + 1)
        }
    }

    /// The value range of `key` in the object at `range`, or nil.
    static func member(_ b: Bytes, _ range: Range<Int>, _ key: String) throws(Failure) -> Range<Int>? {
        let k = Array(key.utf8)
        for m in try members(b, range) where m.key.count == k.count && b[m.key].elementsEqual(k) {
            return m.value
        }
        return nil
    }

    /// A row ID the way Freshet's `.field(key)` finds it: a string's contents, or an integer's digits.
    static func id(_ b: Bytes, _ range: Range<Int>, field key: String) throws(Failure) -> String {
        guard let v = try member(b, range, key) else { throw Failure(description: "row has no \(key)") }
        if b[v.lowerBound] == UInt8(ascii: "\"") {
            let inner = b[(v.lowerBound + 1)..<(v.upperBound - 1)]
            if inner.contains(UInt8(ascii: "\\")) { throw Failure(description: "escaped IDs are not supported by the bench's slicer") }
            return String(decoding: inner, as: UTF8.self)
        }
        return String(decoding: b[v], as: UTF8.self)
    }

    /// Rows of a list page: the elements of the array under `rowsKey`, each with its ID.
    static func pageRows(_ body: Bytes, rowsKey: String, idField: String) throws(Failure) -> [(id: String, range: Range<Int>)] {
        guard let array = try member(body, 0..<body.count, rowsKey) else { throw Failure(description: "page has no \(rowsKey)") }
        var rows: [(id: String, range: Range<Int>)] = []
        for e in try elements(body, array) {
            rows.append((try id(body, e, field: idField), e))
        }
        return rows
    }
}
