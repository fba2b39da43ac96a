/// The validating reader behind ``JSONTape`` (RFC 8259 grammar).
///
/// One loop over the input with an explicit stack of open containers instead of a recursive
/// descent: the position, the node count and the innermost container stay in registers, and
/// no function call is made per value (a profile of W2b had the recursive reader's calls,
/// spills and `Array.append` uniqueness checks as a third of its time; docs/performance.md,
/// round 7). Nesting costs one 24-byte frame per level, on the heap, so hostile depth cannot
/// exhaust the stack.
///
/// Memory: `base[0 ..< n]` is the caller's input, which ``JSONTape`` only reads inside the
/// call that lends it; `nodes` and the frames belong to `storage`, which the tape holds for
/// the whole parse (they are reallocated only by `storage` itself, when the parser asks it to
/// grow, and the parser then takes the new pointer).
struct JSONParser {
    let base: UnsafePointer<UInt8>
    let n: Int
    let maxDepth: Int
    /// Unowned: the tape being parsed holds `storage` for the whole of ``parse(_:maxDepth:into:)``
    /// (its caller, ``JSONTape``, passes its own storage), and the parser lives only inside that
    /// call; a strong reference cost a retain and release per parse, 2% of W3's 10,000 rows.
    unowned(unsafe) let storage: TapeStorage
    /// `storage.nodes`, its length and its capacity, kept here while parsing (written back at the end).
    var nodes: UnsafeMutablePointer<JSONNode>
    var count = 0
    var capacity: Int

    /// One open array or object.
    struct Frame {
        /// Its node on the tape.
        var index: Int
        /// Members (or elements) read so far.
        var members: UInt32
        var isObject: Bool
        /// Whether the container that holds this one was canonical so far.
        var outerClean: Bool
        /// The previous key's byte range (`keyEnd == 0`: no key yet; a key ends at ≥ 1).
        var keyStart: UInt32
        var keyEnd: UInt32
    }

    /// Parses `bytes` onto `storage` (replacing what it held).
    /// - Throws: ``JSONError`` naming the first problem and its offset; `storage` then holds no nodes.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int, into storage: TapeStorage) throws(JSONError) {
        storage.count = 0
        guard let base = bytes.baseAddress else { throw JSONError(.unexpectedEnd, at: 0) }
        var parser = JSONParser(base: base, n: bytes.count, maxDepth: maxDepth, storage: storage, nodes: storage.nodes, capacity: storage.capacity)
        try parser.parseDocument()
        storage.count = parser.count
    }

    mutating func parseDocument() throws(JSONError) {
        var i = 0
        if n >= 3 && base[0] == 0xEF && base[1] == 0xBB && base[2] == 0xBF { i = 3 }
        // Whether everything read since the innermost open container began is already in the
        // canonical row form (``JSONWriter/canonical(_:of:in:)``): no white space, object keys
        // strictly ascending, only escapes the canonical writer itself writes. A container
        // whose bytes are canonical gets `flag` set, so the writer copies it whole.
        var clean = true
        skipWhitespace(&i, &clean)
        var depth = 0
        // The innermost open container (meaningful while depth > 0); its parents are in
        // storage.frames[0 ..< depth - 1].
        var frame = Frame(index: 0, members: 0, isObject: false, outerClean: true, keyStart: 0, keyEnd: 0)
        // Whether an object member's key and `:` come before the next value.
        var member = false
        value: while true {
            if member {
                // Written out here, not called: the compiler did not inline it, and `i` then
                // lived in memory for every string.
                member = false
                guard i < n else { throw JSONError(.unexpectedEnd, at: i) }
                guard base[i] == UInt8(ascii: "\"") else { throw JSONError(.unexpectedByte(base[i]), at: i) }
                let start = UInt32(truncatingIfNeeded: i &+ 1)
                let escaped = try string(&i, &clean)
                let end = UInt32(truncatingIfNeeded: i &- 1)
                // A key with escapes sorts by its text, not its bytes: copied only by the slow path.
                if escaped || (clean && frame.keyEnd != 0 && !ascends(frame.keyStart, frame.keyEnd, start, end)) { clean = false }
                frame.keyStart = start
                frame.keyEnd = end
                // Canonical input has the `:` right after the key and the value right after it:
                // the white-space loops run only when the byte there is not what comes next
                // (here and after a value: every white-space byte is ≤ 0x20).
                if i < n && base[i] == UInt8(ascii: ":") {
                    i &+= 1
                } else {
                    skipWhitespace(&i, &clean)
                    guard i < n else { throw JSONError(.unexpectedEnd, at: i) }
                    guard base[i] == UInt8(ascii: ":") else { throw JSONError(.unexpectedByte(base[i]), at: i) }
                    i &+= 1
                }
                if i < n && base[i] <= 0x20 { skipWhitespace(&i, &clean) }
            }
            guard i < n else { throw JSONError(.unexpectedEnd, at: i) }
            let c = base[i]
            switch c {
            case UInt8(ascii: "\""):
                _ = try string(&i, &clean)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard depth < maxDepth else { throw JSONError(.tooDeep(maxDepth: maxDepth), at: i) }
                let isObject = c == UInt8(ascii: "{")
                if depth > 0 { push(frame, at: depth - 1) }
                depth += 1
                frame = Frame(index: count, members: 0, isObject: isObject, outerClean: clean, keyStart: 0, keyEnd: 0)
                append(JSONNode(kind: isObject ? .object : .array, flag: false, count: 0, start: UInt32(truncatingIfNeeded: i), end: 0, next: 0))
                clean = true
                i &+= 1
                skipWhitespace(&i, &clean)
                guard i < n else { throw JSONError(.unexpectedEnd, at: i) }
                if base[i] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    i &+= 1
                    close(&frame, &depth, &clean, end: i)
                } else {
                    member = isObject
                    continue value
                }
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                try number(&i)
            case UInt8(ascii: "t"): try literal(&i, "true", .true)
            case UInt8(ascii: "f"): try literal(&i, "false", .false)
            case UInt8(ascii: "n"): try literal(&i, "null", .null)
            default: throw JSONError(.unexpectedByte(c), at: i)
            }
            // A value ended at i: close every container that ends here, until one goes on
            // after a `,` (read its next key, then its next value) or the document ends.
            while depth > 0 {
                frame.members &+= 1
                if i < n && base[i] <= 0x20 { skipWhitespace(&i, &clean) }
                guard i < n else { throw JSONError(.unexpectedEnd, at: i) }
                let d = base[i]
                i &+= 1
                if d == UInt8(ascii: ",") {
                    if i < n && base[i] <= 0x20 { skipWhitespace(&i, &clean) }
                    member = frame.isObject
                    continue value
                }
                guard d == (frame.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else {
                    throw JSONError(.unexpectedByte(d), at: i - 1)
                }
                close(&frame, &depth, &clean, end: i)
            }
            break
        }
        skipWhitespace(&i, &clean)
        if i < n { throw JSONError(.trailingContent, at: i) }
    }

    @inline(__always)
    func skipWhitespace(_ i: inout Int, _ clean: inout Bool) {
        while i < n {
            switch base[i] {
            case 0x20, 0x0A, 0x0D, 0x09: i &+= 1; clean = false
            default: return
            }
        }
    }

    @inline(__always)
    mutating func append(_ node: JSONNode) {
        if count == capacity { grow() }
        (nodes + count).initialize(to: node)
        count &+= 1
    }

    @inline(never)
    mutating func grow() {
        storage.reserve(nodes: max(16, capacity * 2), keeping: count)
        nodes = storage.nodes
        capacity = storage.capacity
    }

    @inline(__always)
    func push(_ frame: Frame, at level: Int) {
        if level == storage.frameCapacity { storage.growFrames() }
        storage.frames[level] = frame
    }

    /// Completes the innermost container now that its closing byte is read (`end` is just
    /// past it): its member count, end, the next node after its contents, and whether it is
    /// canonical; then its parent becomes the innermost.
    @inline(__always)
    func close(_ frame: inout Frame, _ depth: inout Int, _ clean: inout Bool, end: Int) {
        let node = nodes + frame.index
        node.pointee.count = frame.members
        node.pointee.end = UInt32(truncatingIfNeeded: end)
        node.pointee.next = UInt32(truncatingIfNeeded: count)
        node.pointee.flag = clean
        clean = frame.outerClean && clean
        depth &-= 1
        if depth > 0 { frame = storage.frames[depth - 1] }
    }

    /// Whether the key `b` sorts strictly after the key `a` by their bytes (the canonical
    /// order; both unescaped, as a clean object's keys are).
    @inline(__always)
    func ascends(_ aStart: UInt32, _ aEnd: UInt32, _ bStart: UInt32, _ bEnd: UInt32) -> Bool {
        let la = Int(aEnd &- aStart), lb = Int(bEnd &- bStart)
        // Keys are short: a byte loop inline is cheaper than a call to memcmp per key.
        let pa = base + Int(aStart), pb = base + Int(bStart)
        var k = 0
        let m = min(la, lb)
        while k < m {
            if pa[k] != pb[k] { return pa[k] < pb[k] }
            k &+= 1
        }
        return la < lb
    }

    /// Reads the string whose opening quote is at `i`, appends its node and leaves `i` just
    /// past its closing quote. Returns whether it holds a backslash escape.
    @inline(__always)
    mutating func string(_ i: inout Int, _ clean: inout Bool) throws(JSONError) -> Bool {
        i &+= 1
        let start = i
        var escaped = false
        while true {
            // Eight bytes at a time while none is a quote, a backslash, a control character
            // or non-ASCII (the usual case: plain text and URLs). A word that holds one skips
            // straight to the first such byte: the lowest flagged byte is exact (a borrow
            // only carries upwards from a byte that is itself special), the ones above it
            // may not be. Words are loaded little-endian, so the first byte is the lowest.
            let c: UInt8
            if i &+ 8 <= n {
                let w = UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
                let quote = w ^ (ones &* 0x22), backslash = w ^ (ones &* 0x5C)
                let special = (((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((w &- ones &* 0x20) & ~w) | w) & highs
                if special == 0 {
                    i &+= 8
                    continue
                }
                // The special byte itself, taken from the word (no second load).
                let bit = special.trailingZeroBitCount
                i &+= bit &>> 3
                c = UInt8(truncatingIfNeeded: w &>> UInt64(bit & ~7))
            } else {
                guard i < n else { throw JSONError(.unexpectedEnd, at: i) }
                c = base[i]
            }
            if c == UInt8(ascii: "\"") { break }
            if c == UInt8(ascii: "\\") {
                escaped = true
                try escape(&i, &clean)
            } else if c < 0x20 {
                throw JSONError(.controlCharacterInString, at: i)
            } else if c < 0x80 {
                i &+= 1
            } else {
                try utf8Sequence(&i)
            }
        }
        append(JSONNode(kind: .string, flag: escaped, count: 0, start: UInt32(truncatingIfNeeded: start), end: UInt32(truncatingIfNeeded: i), next: UInt32(truncatingIfNeeded: count &+ 1)))
        i &+= 1
        return escaped
    }

    /// Reads one escape at `i` (the backslash); a high surrogate must be followed by a low one.
    @inline(never)
    func escape(_ i: inout Int, _ clean: inout Bool) throws(JSONError) {
        let at = i
        guard i + 1 < n else { throw JSONError(.unexpectedEnd, at: n) }
        switch base[i + 1] {
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
                guard i + 1 < n, base[i] == UInt8(ascii: "\\"), base[i + 1] == UInt8(ascii: "u") else {
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
        guard j + 4 <= n else { throw JSONError(.unexpectedEnd, at: n) }
        var v: UInt32 = 0
        for k in j..<j + 4 {
            let h = JSONTape.hexValue(base[k])
            guard h != 0xFF else { throw JSONError(.invalidEscape, at: k) }
            v = v << 4 | UInt32(h)
        }
        return v
    }

    /// Validates one multi-byte UTF-8 sequence at `i` (Unicode 15, table 3-7: no overlong
    /// forms, no surrogates, nothing above U+10FFFF).
    @inline(never)
    func utf8Sequence(_ i: inout Int) throws(JSONError) {
        let b0 = base[i]
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
        guard i + length <= n else { throw JSONError(.invalidUTF8, at: i) }
        let b1 = base[i + 1]
        guard b1 >= lower && b1 <= upper else { throw JSONError(.invalidUTF8, at: i) }
        for k in 2..<max(2, length) where base[i + k] & 0xC0 != 0x80 { throw JSONError(.invalidUTF8, at: i) }
        i += length
    }

    @inline(__always)
    func isDigit(_ c: UInt8) -> Bool { c &- UInt8(ascii: "0") < 10 }

    @inline(__always)
    mutating func number(_ i: inout Int) throws(JSONError) {
        let start = i
        var integer = true
        if base[i] == UInt8(ascii: "-") { i &+= 1 }
        guard i < n else { throw JSONError(.invalidNumber, at: start) }
        if base[i] == UInt8(ascii: "0") {
            i &+= 1
        } else if isDigit(base[i]) {
            i &+= 1
            while i < n && isDigit(base[i]) { i &+= 1 }
        } else {
            throw JSONError(.invalidNumber, at: start)
        }
        if i < n && (base[i] == UInt8(ascii: ".") || base[i] | 0x20 == UInt8(ascii: "e")) {
            integer = false
            try fraction(&i, start: start)
        }
        append(JSONNode(kind: .number, flag: integer, count: 0, start: UInt32(truncatingIfNeeded: start), end: UInt32(truncatingIfNeeded: i), next: UInt32(truncatingIfNeeded: count &+ 1)))
    }

    /// The fraction and exponent of a number, if any, at `i`.
    @inline(never)
    func fraction(_ i: inout Int, start: Int) throws(JSONError) {
        if i < n && base[i] == UInt8(ascii: ".") {
            i += 1
            let digits = i
            while i < n && isDigit(base[i]) { i += 1 }
            guard i > digits else { throw JSONError(.invalidNumber, at: start) }
        }
        if i < n && (base[i] == UInt8(ascii: "e") || base[i] == UInt8(ascii: "E")) {
            i += 1
            if i < n && (base[i] == UInt8(ascii: "+") || base[i] == UInt8(ascii: "-")) { i += 1 }
            let digits = i
            while i < n && isDigit(base[i]) { i += 1 }
            guard i > digits else { throw JSONError(.invalidNumber, at: start) }
        }
    }

    @inline(__always)
    mutating func literal(_ i: inout Int, _ word: StaticString, _ kind: JSONNode.Kind) throws(JSONError) {
        let start = i
        let length = word.utf8CodeUnitCount
        let w = word.utf8Start
        // The first four bytes as one word when they are there (true, fals, null).
        if i &+ 4 <= n,
           UnsafeRawPointer(base + i).loadUnaligned(as: UInt32.self) == UnsafeRawPointer(w).loadUnaligned(as: UInt32.self),
           length == 4 || (i &+ 4 < n && base[i &+ 4] == w[4]) {
            i &+= length
        } else {
            for j in 0..<length {
                guard i < n else { throw JSONError(.unexpectedEnd, at: i) }
                guard base[i] == w[j] else { throw JSONError(.unexpectedByte(base[i]), at: i) }
                i += 1
            }
        }
        append(JSONNode(kind: kind, flag: false, count: 0, start: UInt32(truncatingIfNeeded: start), end: UInt32(truncatingIfNeeded: i), next: UInt32(truncatingIfNeeded: count &+ 1)))
    }
}
