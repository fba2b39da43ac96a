import Foundation

extension JSONWriter {
    /// Writes the value at `index` of `tape` in Freshet's canonical row form
    /// (docs/log-format.md §6.2): no insignificant white space; object members sorted by key
    /// (the UTF-8 bytes of the key's text, compared bytewise), a key that appears more than
    /// once kept only at its last occurrence (the value JSONSerialization reads); strings with
    /// the minimal escaping
    /// ``escapedString(_:)`` writes (so `"\u00e9"` and `"é"`, `"\/"` and `"/"` give the same
    /// bytes); numbers byte-for-byte as the server wrote them.
    ///
    /// So the same server row always gives the same bytes, whatever its white space, key
    /// order and string escapes, and an identical refetch changes nothing.
    package mutating func canonical(_ index: Int, of tape: JSONTape, in input: UnsafeBufferPointer<UInt8>) {
        let node = tape[index]
        if node.flag, node.kind == .object || node.kind == .array {
            // Already canonical (the parser checked it): the same bytes, copied at once.
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: input[Int(node.start)..<Int(node.end)]))
            return
        }
        switch node.kind {
        case .string:
            let raw = UnsafeBufferPointer(rebasing: input[Int(node.start)..<Int(node.end)])
            if node.flag {
                // Escapes are rewritten in the one form JSONWriter uses, so `"\u00e9"`,
                // `"\/"` and their plain spellings give the same bytes.
                JSONTape.unescape(raw).withUnsafeBufferPointer { escapedString($0) }
            } else {
                bytes.append(UInt8(ascii: "\""))
                bytes.append(contentsOf: raw)
                bytes.append(UInt8(ascii: "\""))
            }
        case .number, .true, .false, .null:
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: input[Int(node.start)..<Int(node.end)]))
        case .array:
            bytes.append(UInt8(ascii: "["))
            var i = index + 1
            for n in 0..<Int(node.count) {
                if n > 0 { bytes.append(UInt8(ascii: ",")) }
                canonical(i, of: tape, in: input)
                i = Int(tape[i].next)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object:
            canonicalObject(index, node, tape, input)
        }
    }

    private mutating func canonicalObject(_ index: Int, _ node: JSONNode, _ tape: JSONTape, _ input: UnsafeBufferPointer<UInt8>) {
        // Key indices in document order; most servers already send them sorted.
        var keys: [Int] = []
        keys.reserveCapacity(Int(node.count))
        var k = index + 1
        var ordered = true
        for _ in 0..<Int(node.count) {
            if ordered, let previous = keys.last, !(Self.compareKeys(previous, k, tape, input) < 0) { ordered = false }
            keys.append(k)
            k = Int(tape[k + 1].next)
        }
        if !ordered {
            // Stable: equal keys keep document order, so the last of them is the one kept.
            keys = keys.enumerated().sorted { a, b in
                let c = Self.compareKeys(a.element, b.element, tape, input)
                return c != 0 ? c < 0 : a.offset < b.offset
            }.map(\.element)
        }
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for (n, key) in keys.enumerated() {
            if !ordered, n + 1 < keys.count, Self.compareKeys(key, keys[n + 1], tape, input) == 0 { continue }
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            canonical(key, of: tape, in: input)
            bytes.append(UInt8(ascii: ":"))
            canonical(key + 1, of: tape, in: input)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Orders two keys by their UTF-8 bytes; a key with escapes is compared by its text.
    static func compareKeys(_ a: Int, _ b: Int, _ tape: JSONTape, _ input: UnsafeBufferPointer<UInt8>) -> Int {
        let na = tape[a], nb = tape[b]
        if na.flag || nb.flag {
            let ua = na.flag ? JSONTape.unescape(UnsafeBufferPointer(rebasing: input[Int(na.start)..<Int(na.end)])) : Array(input[Int(na.start)..<Int(na.end)])
            let ub = nb.flag ? JSONTape.unescape(UnsafeBufferPointer(rebasing: input[Int(nb.start)..<Int(nb.end)])) : Array(input[Int(nb.start)..<Int(nb.end)])
            return ua.lexicographicallyPrecedes(ub) ? -1 : (ua == ub ? 0 : 1)
        }
        let la = Int(na.end - na.start), lb = Int(nb.end - nb.start)
        guard let base = input.baseAddress else { return 0 }
        let c = memcmp(base + Int(na.start), base + Int(nb.start), min(la, lb))
        if c != 0 { return Int(c) }
        return la - lb
    }
}

extension JSONWriter {
    /// `json` (one JSON text, RFC 8259) in the canonical row form of
    /// ``canonical(_:of:in:)`` — the form the fold gives fetched rows — so a row that enters
    /// through a local write, a push or a mutation is stored as the same bytes as the same row
    /// fetched. Returns nil when `json` is canonical already (no copy, no comparison).
    /// - Throws: ``JSONError`` when `json` is not exactly one JSON value (not JSON, truncated,
    ///   empty, or two values).
    package static func canonicalForm(of json: Data) throws(JSONError) -> Data? {
        let outcome: Result<Data?, JSONError> = json.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            do throws(JSONError) {
                let tape = try JSONTape(parsing: bytes)
                let root = tape[0]
                // A clean object or array spanning the whole input is canonical already.
                if root.flag, root.kind == .object || root.kind == .array, root.start == 0, Int(root.end) == bytes.count { return .success(nil) }
                var writer = JSONWriter(capacity: bytes.count)
                writer.canonical(0, of: tape, in: bytes)
                return .success(Data(writer.bytes))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }
}
