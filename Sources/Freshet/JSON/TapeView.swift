/// A parsed row as plain pointers: the tape's nodes and the bytes they index. What
/// ``TapeDecoder`` and its containers read on every decoded member, so that a lookup touches
/// no reference-counted value (reading through the decoder, a class, retained and released it
/// per member: docs/performance.md, round 7).
///
/// Lifetime: both pointers are lent by the decoder that made the view, for the row it is
/// decoding (``TapeDecoder/decodeRow(_:from:)`` or ``RowDecoder/decode(_:from:)``); a view,
/// like a container holding one, must not be used after that decode call returns.
struct TapeView {
    /// Nodes `0 ..< count` of the decoder's tape (``JSONTape/unsafeNodes``).
    let nodes: UnsafePointer<JSONNode>
    /// The row's bytes, which the nodes' offsets index.
    let bytes: UnsafeBufferPointer<UInt8>

    /// The node at `index` (an index taken from the tape itself: a child, a `next`).
    @inline(__always)
    subscript(_ index: Int) -> JSONNode { nodes[index] }

    /// The index of the value of the first member named `key` in the object at `object` (the
    /// one JSONDecoder reads), or nil. Keys are compared with the row's bytes in place.
    @inline(__always)
    func firstMember(_ key: String, of object: Int) -> Int? {
        var key = key
        return key.withUTF8 { k -> Int? in
            var m = object + 1
            for _ in 0..<Int(nodes[object].count) {
                if keyEquals(nodes[m], k) { return m + 1 }
                m = Int(nodes[m + 1].next)
            }
            return nil
        }
    }

    /// Whether the key `node` is the UTF-8 text `key`.
    @inline(__always)
    private func keyEquals(_ node: JSONNode, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
        let raw = UnsafeBufferPointer(rebasing: bytes[Int(node.start)..<Int(node.end)])
        // A key with escapes is compared by its text (rare: canonical rows have none).
        if node.flag { return JSONTape.unescape(raw).elementsEqual(key) }
        guard raw.count == key.count else { return false }
        // Keys are short: a byte loop inline is cheaper than a call to memcmp.
        for k in 0..<raw.count where raw[k] != key[k] { return false }
        return true
    }

    /// The text of the string at `index`, or nil when the value there is not a string.
    @inline(__always)
    func string(at index: Int) -> String? {
        let node = nodes[index]
        guard node.kind == .string else { return nil }
        return JSONTape.text(of: node, in: bytes)
    }

    /// ``smallInteger(at:)`` as a `Double`; `-0` is -0.0, as JSONDecoder reads it.
    @inline(__always)
    func smallIntegerAsDouble(at index: Int) -> Double? {
        guard let n = smallInteger(at: index) else { return nil }
        return n == 0 && bytes[Int(nodes[index].start)] == UInt8(ascii: "-") ? -0.0 : Double(n)
    }

    /// The value of the number at `index` when it is an integer literal of at most 18 digits
    /// (read straight from the bytes), otherwise nil.
    @inline(__always)
    func smallInteger(at index: Int) -> Int64? {
        let node = nodes[index]
        guard node.kind == .number, node.flag else { return nil }
        var i = Int(node.start)
        let end = Int(node.end)
        guard end - i <= 19 else { return nil }
        let negative = bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        guard end - i <= 18 else { return nil }
        var v: Int64 = 0
        while i < end {
            v = v &* 10 &+ Int64(bytes[i] &- UInt8(ascii: "0"))
            i += 1
        }
        return negative ? -v : v
    }
}
