import Foundation

/// A validated index of one JSON text (RFC 8259): every value's kind and byte range, in
/// document order, so rows can be sliced, canonicalized and decoded without building
/// Foundation objects or parsing twice.
///
/// The tape holds offsets only; read it together with the bytes it was parsed from.
/// Parsing accepts exactly RFC 8259 JSON in UTF-8 (an optional UTF-8 byte order mark first,
/// any value at the top level) and rejects invalid UTF-8, lone UTF-16 surrogate escapes,
/// unescaped control characters and nesting deeper than `maxDepth`.
package struct JSONTape: Sendable {
    /// JSONDecoder's and JSONSerialization's nesting limit.
    package static let defaultMaxDepth = 512

    /// The nodes, in one allocation (no `Array`: appending to one checked its uniqueness per
    /// value, and reading one through a class property retained it per read).
    private var storage: TapeStorage

    /// Parses `bytes`.
    /// - Throws: ``JSONError`` naming the first problem and its byte offset.
    package init(parsing bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = JSONTape.defaultMaxDepth) throws(JSONError) {
        guard bytes.count < Int(UInt32.max) else { throw JSONError(.tooLarge, at: 0) }
        storage = TapeStorage(capacity: max(16, bytes.count / 8))   // about one value per 8 bytes or fewer
        try JSONParser.parse(bytes, maxDepth: maxDepth, into: storage)
    }

    /// An empty tape, to be filled by ``reparse(_:maxDepth:)``.
    package init() {
        storage = TapeStorage(capacity: 16)
    }

    /// Parses `bytes` into this tape, reusing its storage: decoding many rows with one tape
    /// allocates only when a row needs more nodes than any before it.
    /// - Throws: ``JSONError`` naming the first problem and its byte offset; the tape then
    ///   holds no nodes until the next successful parse.
    package mutating func reparse(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = JSONTape.defaultMaxDepth) throws(JSONError) {
        // A copy of this tape shares the storage: it keeps the old nodes, this one gets new storage.
        if !isKnownUniquelyReferenced(&storage) { storage = TapeStorage(capacity: max(16, storage.capacity)) }
        guard bytes.count < Int(UInt32.max) else {
            storage.count = 0
            throw JSONError(.tooLarge, at: 0)
        }
        try JSONParser.parse(bytes, maxDepth: maxDepth, into: storage)
    }

    /// The number of nodes (values) on the tape.
    package var count: Int { storage.count }

    /// The nodes in document order, copied (for tests and tools; decoders read in place).
    package var nodes: [JSONNode] { Array(UnsafeBufferPointer(start: storage.nodes, count: storage.count)) }

    package subscript(_ index: Int) -> JSONNode {
        precondition(index >= 0 && index < storage.count, "JSON tape index \(index) out of range 0..<\(storage.count)")
        return storage.nodes[index]
    }

    /// The first node, for a reader that takes the nodes once instead of through this tape on
    /// every read (``TapeDecoder``). The pointer is valid only while this tape (or a copy
    /// sharing its storage) is alive and not parsed again; nodes `0 ..< count` are readable.
    package var unsafeNodes: UnsafePointer<JSONNode> { UnsafePointer(storage.nodes) }

    /// The index of the value of the last member named `key` in the object at `object`
    /// (the last one wins, as in JSONSerialization), or nil.
    package func member(_ key: String, of object: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var found: Int?
        var k = object + 1
        for _ in 0..<Int(self[object].count) {
            let value = k + 1
            if keyEquals(k, key, in: bytes) { found = value }
            k = Int(self[value].next)
        }
        return found
    }

    /// The index of the value of the first member named `key` in the object at `object` (the
    /// one JSONDecoder reads), or nil.
    package func firstMember(_ key: String, of object: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var k = object + 1
        for _ in 0..<Int(self[object].count) {
            if keyEquals(k, key, in: bytes) { return k + 1 }
            k = Int(self[k + 1].next)
        }
        return nil
    }

    /// The indices of the elements of the array at `array` (or the values of an object's members).
    package func children(of container: Int) -> [Int] {
        let node = self[container]
        var result: [Int] = []
        result.reserveCapacity(Int(node.count))
        var i = container + 1
        for _ in 0..<node.count {
            if node.kind == .object { i += 1 }
            result.append(i)
            i = Int(self[i].next)
        }
        return result
    }

    /// Whether the string at `index` (a key) is `key`.
    package func keyEquals(_ index: Int, _ key: String, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let node = self[index]
        if node.flag { return string(at: index, in: bytes) == key }
        var key = key
        return key.withUTF8 { k in
            let length = Int(node.end - node.start)
            guard k.count == length else { return false }
            guard length > 0, let kb = k.baseAddress, let b = bytes.baseAddress else { return true }
            return memcmp(kb, b + Int(node.start), length) == 0
        }
    }

    /// The text of the string at `index`, escapes resolved.
    package func string(at index: Int, in bytes: UnsafeBufferPointer<UInt8>) -> String {
        Self.text(of: self[index], in: bytes)
    }

    /// The text of the string `node` (a node of a tape of `bytes`), escapes resolved.
    @inline(__always)
    static func text(of node: JSONNode, in bytes: UnsafeBufferPointer<UInt8>) -> String {
        let raw = UnsafeBufferPointer(rebasing: bytes[Int(node.start)..<Int(node.end)])
        if !node.flag { return String(decoding: raw, as: UTF8.self) }
        // Unescaped text is never longer than its escaped form.
        return String(unsafeUninitializedCapacity: raw.count) { JSONTape.unescape(raw, into: $0) }
    }

    /// The text of the number at `index`, as written.
    package func numberText(at index: Int, in bytes: UnsafeBufferPointer<UInt8>) -> String {
        let node = self[index]
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[Int(node.start)..<Int(node.end)]), as: UTF8.self)
    }

    /// Resolves the escapes of a validated string's bytes (RFC 8259 §7) into UTF-8.
    package static func unescape(_ raw: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: raw.count) { buffer, count in count = unescape(raw, into: buffer) }
    }

    /// Writes the unescaped UTF-8 of `raw` (validated) into `out` (at least `raw.count` bytes)
    /// and returns how many bytes it wrote.
    static func unescape(_ raw: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var i = 0, o = 0
        func put(_ b: UInt8) { out[o] = b; o += 1 }
        while i < raw.count {
            let c = raw[i]
            guard c == UInt8(ascii: "\\") else { put(c); i += 1; continue }
            let e = raw[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "b"): put(0x08)
            case UInt8(ascii: "f"): put(0x0C)
            case UInt8(ascii: "n"): put(0x0A)
            case UInt8(ascii: "r"): put(0x0D)
            case UInt8(ascii: "t"): put(0x09)
            case UInt8(ascii: "u"):
                var s = hex4(raw, i)
                i += 4
                if s >= 0xD800 && s < 0xDC00 {
                    let low = hex4(raw, i + 2)
                    i += 6
                    s = 0x10000 + ((s - 0xD800) << 10) + (low - 0xDC00)
                }
                // At most 4 output bytes for 6 (or 12) input bytes.
                switch s {
                case ..<0x80: put(UInt8(s))
                case ..<0x800: put(UInt8(0xC0 | s >> 6)); put(UInt8(0x80 | s & 0x3F))
                case ..<0x10000: put(UInt8(0xE0 | s >> 12)); put(UInt8(0x80 | s >> 6 & 0x3F)); put(UInt8(0x80 | s & 0x3F))
                default:
                    put(UInt8(0xF0 | s >> 18)); put(UInt8(0x80 | s >> 12 & 0x3F))
                    put(UInt8(0x80 | s >> 6 & 0x3F)); put(UInt8(0x80 | s & 0x3F))
                }
            default: put(e)   // " \ /
            }
        }
        return o
    }

    static func hex4(_ raw: UnsafeBufferPointer<UInt8>, _ i: Int) -> UInt32 {
        var v: UInt32 = 0
        for j in i..<i + 4 { v = v << 4 | UInt32(hexValue(raw[j])) }
        return v
    }

    static func hexValue(_ c: UInt8) -> UInt8 {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: 0xFF
        }
    }
}

/// The nodes of one ``JSONTape`` in one allocation, and the parser's stack of open containers;
/// both reused when the tape is parsed again.
///
/// Unchecked `Sendable`: it is written only by ``JSONParser``, through a tape that holds the
/// only reference (``JSONTape/reparse(_:maxDepth:)`` makes new storage otherwise), and only
/// read once the tape is shared.
final class TapeStorage: @unchecked Sendable {
    private(set) var nodes: UnsafeMutablePointer<JSONNode>
    /// How many of `nodes` are parsed (initialized).
    var count = 0
    private(set) var capacity: Int
    /// Open containers' frames while parsing (the innermost one is kept by the parser).
    private(set) var frames: UnsafeMutablePointer<JSONParser.Frame>
    private(set) var frameCapacity: Int

    init(capacity: Int) {
        nodes = .allocate(capacity: capacity)
        self.capacity = capacity
        frameCapacity = 16
        frames = .allocate(capacity: frameCapacity)
    }

    deinit {
        // Nodes and frames are trivial values: nothing to deinitialize.
        nodes.deallocate()
        frames.deallocate()
    }

    /// Grows `nodes` to `capacity`, keeping the first `keeping`.
    func reserve(nodes newCapacity: Int, keeping: Int) {
        let grown = UnsafeMutablePointer<JSONNode>.allocate(capacity: newCapacity)
        grown.moveInitialize(from: nodes, count: keeping)
        nodes.deallocate()
        nodes = grown
        capacity = newCapacity
    }

    /// Doubles `frames`, keeping them all.
    func growFrames() {
        let grown = UnsafeMutablePointer<JSONParser.Frame>.allocate(capacity: frameCapacity * 2)
        grown.moveInitialize(from: frames, count: frameCapacity)
        frames.deallocate()
        frames = grown
        frameCapacity *= 2
    }
}
