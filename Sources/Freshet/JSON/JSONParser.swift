import Foundation

/// The validating recursive-descent reader behind ``JSONTape`` (RFC 8259 grammar).
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var i = 0
    var nodes: [JSONNode] = []
    /// Whether everything read since the innermost open container began is already in the
    /// canonical row form (``JSONWriter/canonical(_:of:in:)``): no white space, object keys
    /// strictly ascending, only escapes the canonical writer itself writes. A container whose
    /// bytes are canonical gets `flag` set, so the writer copies it whole.
    var clean = true

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func parseDocument() throws(JSONError) {
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { i = 3 }
        skipWhitespace()
        try parseValue(depth: 0)
        skipWhitespace()
        if i < bytes.count { throw JSONError(.trailingContent, at: i) }
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x0A, 0x0D, 0x09: i += 1; clean = false
            default: return
            }
        }
    }

    @inline(__always)
    func peek() throws(JSONError) -> UInt8 {
        guard i < bytes.count else { throw JSONError(.unexpectedEnd, at: i) }
        return bytes[i]
    }

    mutating func parseValue(depth: Int) throws(JSONError) {
        let c = try peek()
        switch c {
        case UInt8(ascii: "\""): try parseString()
        case UInt8(ascii: "{"): try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): try parseArray(depth: depth + 1)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try parseNumber()
        case UInt8(ascii: "t"): try parseLiteral("true", .true)
        case UInt8(ascii: "f"): try parseLiteral("false", .false)
        case UInt8(ascii: "n"): try parseLiteral("null", .null)
        default: throw JSONError(.unexpectedByte(c), at: i)
        }
    }

    mutating func parseLiteral(_ word: StaticString, _ kind: JSONNode.Kind) throws(JSONError) {
        let start = i
        let length = word.utf8CodeUnitCount
        for j in 0..<length {
            guard i < bytes.count else { throw JSONError(.unexpectedEnd, at: i) }
            guard bytes[i] == word.utf8Start[j] else { throw JSONError(.unexpectedByte(bytes[i]), at: i) }
            i += 1
        }
        nodes.append(JSONNode(kind: kind, flag: false, count: 0, start: UInt32(start), end: UInt32(i), next: UInt32(nodes.count + 1)))
    }

    mutating func parseObject(depth: Int) throws(JSONError) {
        guard depth <= maxDepth else { throw JSONError(.tooDeep(maxDepth: maxDepth), at: i) }
        let index = nodes.count
        nodes.append(JSONNode(kind: .object, flag: false, count: 0, start: UInt32(i), end: 0, next: 0))
        let outerClean = clean
        clean = true
        i += 1
        skipWhitespace()
        var count: UInt32 = 0
        var previousKey = -1
        if try peek() == UInt8(ascii: "}") {
            i += 1
        } else {
            while true {
                let c = try peek()
                guard c == UInt8(ascii: "\"") else { throw JSONError(.unexpectedByte(c), at: i) }
                let key = nodes.count
                try parseString()
                // A key with escapes sorts by its text, not its bytes: copied only by the slow path.
                if nodes[key].flag || (clean && previousKey >= 0 && !keyAscends(from: previousKey, to: key)) { clean = false }
                previousKey = key
                skipWhitespace()
                let colon = try peek()
                guard colon == UInt8(ascii: ":") else { throw JSONError(.unexpectedByte(colon), at: i) }
                i += 1
                skipWhitespace()
                try parseValue(depth: depth)
                count += 1
                if try endsAfterMember(closing: UInt8(ascii: "}")) { break }
            }
        }
        finish(index, count: count, outerClean: outerClean)
    }

    /// After a member or element: reads `,` (and the white space after it: false, more
    /// follows) or `closing` (true, the container ends).
    /// - Throws: ``JSONError`` for any other byte or the end of input.
    @inline(__always)
    mutating func endsAfterMember(closing: UInt8) throws(JSONError) -> Bool {
        skipWhitespace()
        let d = try peek()
        i += 1
        if d == UInt8(ascii: ",") { skipWhitespace(); return false }
        if d == closing { return true }
        throw JSONError(.unexpectedByte(d), at: i - 1)
    }

    /// Completes the container node at `index` now that its closing byte is read: its member
    /// count, end, the next node after its contents, and whether it is canonical.
    @inline(__always)
    mutating func finish(_ index: Int, count: UInt32, outerClean: Bool) {
        nodes[index].count = count
        nodes[index].end = UInt32(i)
        nodes[index].next = UInt32(nodes.count)
        nodes[index].flag = clean
        clean = outerClean && clean
    }

    /// Whether the key at `b` sorts strictly after the key at `a` by their bytes (the
    /// canonical order; both unescaped, as a clean object's keys are).
    @inline(__always)
    func keyAscends(from a: Int, to b: Int) -> Bool {
        let na = nodes[a], nb = nodes[b]
        let la = Int(na.end - na.start), lb = Int(nb.end - nb.start)
        guard let base = bytes.baseAddress else { return false }
        // Keys are short: a byte loop inline is cheaper than a call to memcmp per key.
        let pa = base + Int(na.start), pb = base + Int(nb.start)
        for k in 0..<min(la, lb) where pa[k] != pb[k] { return pa[k] < pb[k] }
        return la < lb
    }

    mutating func parseArray(depth: Int) throws(JSONError) {
        guard depth <= maxDepth else { throw JSONError(.tooDeep(maxDepth: maxDepth), at: i) }
        let index = nodes.count
        nodes.append(JSONNode(kind: .array, flag: false, count: 0, start: UInt32(i), end: 0, next: 0))
        let outerClean = clean
        clean = true
        i += 1
        skipWhitespace()
        var count: UInt32 = 0
        if try peek() == UInt8(ascii: "]") {
            i += 1
        } else {
            while true {
                try parseValue(depth: depth)
                count += 1
                if try endsAfterMember(closing: UInt8(ascii: "]")) { break }
            }
        }
        finish(index, count: count, outerClean: outerClean)
    }

    mutating func parseString() throws(JSONError) {
        i += 1
        let start = i
        var escaped = false
        let n = bytes.count
        while true {
            // Eight bytes at a time while none is a quote, a backslash, a control character
            // or non-ASCII (the usual case: plain text and URLs). A word that holds one skips
            // straight to the first such byte: the lowest flagged byte is exact (a borrow
            // only carries upwards from a byte that is itself special), the ones above it
            // may not be. Words are loaded little-endian, so the first byte is the lowest.
            if let base = bytes.baseAddress {
                while i + 8 <= n {
                    let w = UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                    let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
                    let quote = w ^ (ones &* 0x22), backslash = w ^ (ones &* 0x5C)
                    let special = (((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((w &- ones &* 0x20) & ~w) | w) & highs
                    if special != 0 {
                        i += special.trailingZeroBitCount >> 3
                        break
                    }
                    i += 8
                }
            }
            guard i < n else { throw JSONError(.unexpectedEnd, at: i) }
            let c = bytes[i]
            if c == UInt8(ascii: "\"") { break }
            if c == UInt8(ascii: "\\") {
                escaped = true
                try parseEscape()
            } else if c < 0x20 {
                throw JSONError(.controlCharacterInString, at: i)
            } else if c < 0x80 {
                i += 1
            } else {
                try validateUTF8Sequence()
            }
        }
        nodes.append(JSONNode(kind: .string, flag: escaped, count: 0, start: UInt32(start), end: UInt32(i), next: UInt32(nodes.count + 1)))
        i += 1
    }

    /// Reads one escape at `i` (the backslash); a high surrogate must be followed by a low one.
    mutating func parseEscape() throws(JSONError) {
        let at = i
        guard i + 1 < bytes.count else { throw JSONError(.unexpectedEnd, at: bytes.count) }
        switch bytes[i + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "b"), UInt8(ascii: "f"),
             UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            i += 2   // written the same way by the canonical writer
        case UInt8(ascii: "/"):
            i += 2
            clean = false
        case UInt8(ascii: "u"):
            clean = false
            let unit = try hex4(at: i + 2)
            i += 6
            if unit >= 0xDC00 && unit < 0xE000 { throw JSONError(.invalidEscape, at: at) }
            if unit >= 0xD800 && unit < 0xDC00 {
                guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                    throw JSONError(.invalidEscape, at: at)
                }
                let low = try hex4(at: i + 2)
                guard low >= 0xDC00 && low < 0xE000 else { throw JSONError(.invalidEscape, at: at) }
                i += 6
            }
        default:
            throw JSONError(.invalidEscape, at: at)
        }
    }

    func hex4(at j: Int) throws(JSONError) -> UInt32 {
        guard j + 4 <= bytes.count else { throw JSONError(.unexpectedEnd, at: bytes.count) }
        var v: UInt32 = 0
        for k in j..<j + 4 {
            let h = JSONTape.hexValue(bytes[k])
            guard h != 0xFF else { throw JSONError(.invalidEscape, at: k) }
            v = v << 4 | UInt32(h)
        }
        return v
    }

    /// Validates one multi-byte UTF-8 sequence at `i` (Unicode 15, table 3-7: no overlong
    /// forms, no surrogates, nothing above U+10FFFF).
    mutating func validateUTF8Sequence() throws(JSONError) {
        let b0 = bytes[i]
        let length: Int
        var lower: UInt8 = 0x80, upper: UInt8 = 0xBF
        switch b0 {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upper = 0x9F
        case 0xF0: length = 4; lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upper = 0x8F
        default: throw JSONError(.invalidUTF8, at: i)
        }
        guard i + length <= bytes.count else { throw JSONError(.invalidUTF8, at: i) }
        let b1 = bytes[i + 1]
        guard b1 >= lower && b1 <= upper else { throw JSONError(.invalidUTF8, at: i) }
        for k in 2..<max(2, length) where bytes[i + k] & 0xC0 != 0x80 { throw JSONError(.invalidUTF8, at: i) }
        i += length
    }

    mutating func parseNumber() throws(JSONError) {
        let start = i
        let n = bytes.count
        var integer = true
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < n else { throw JSONError(.invalidNumber, at: start) }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
        } else if bytes[i] >= UInt8(ascii: "1") && bytes[i] <= UInt8(ascii: "9") {
            while i < n && bytes[i] >= UInt8(ascii: "0") && bytes[i] <= UInt8(ascii: "9") { i += 1 }
        } else {
            throw JSONError(.invalidNumber, at: start)
        }
        if i < n && bytes[i] == UInt8(ascii: ".") {
            integer = false
            i += 1
            let digits = i
            while i < n && bytes[i] >= UInt8(ascii: "0") && bytes[i] <= UInt8(ascii: "9") { i += 1 }
            guard i > digits else { throw JSONError(.invalidNumber, at: start) }
        }
        if i < n && (bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E")) {
            integer = false
            i += 1
            if i < n && (bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-")) { i += 1 }
            let digits = i
            while i < n && bytes[i] >= UInt8(ascii: "0") && bytes[i] <= UInt8(ascii: "9") { i += 1 }
            guard i > digits else { throw JSONError(.invalidNumber, at: start) }
        }
        nodes.append(JSONNode(kind: .number, flag: integer, count: 0, start: UInt32(start), end: UInt32(i), next: UInt32(nodes.count + 1)))
    }
}
