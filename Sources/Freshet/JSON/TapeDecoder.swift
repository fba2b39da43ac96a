import Foundation

/// The `Decoder` behind ``RowDecoder``: one instance per top-level value at a time; nested
/// values are decoded by moving `node` and pushing onto `path`, and put back afterwards.
/// ``decodeRow(_:from:)`` reuses one instance, its tape and its path storage for row after
/// row, so decoding a snapshot allocates no decoder and no tape per row.
///
/// Holds a pointer to the input bytes: use it only inside the `withUnsafeBytes` that made it
/// (for ``decodeRow(_:from:)``, inside that call).
final class TapeDecoder: Decoder {
    // Unchecked: the decoder is used by one thread, inside one decode call at a time (it is
    // not Sendable), and `tape`/`bytes` change only between rows, while no access is open;
    // without it every read of a node pays a dynamic exclusivity check.
    @exclusivity(unchecked) private(set) var tape: JSONTape
    /// `tape`'s nodes in place (``JSONTape/unsafeNodes``) and the row's bytes, taken once per
    /// row instead of through `tape` on every read. Valid for every read made while a row
    /// decodes: the decoder owns `tape`, so its storage lives as long as the decoder, and
    /// `tape` is parsed again only by ``decodeRow(_:from:)``, which takes the view again
    /// before it reads a node.
    @exclusivity(unchecked) private(set) var view: TapeView
    var bytes: UnsafeBufferPointer<UInt8> { view.bytes }
    /// The tape index of the value being decoded.
    @exclusivity(unchecked) var node = 0
    /// The coding path of `node`.
    @exclusivity(unchecked) var path: [any CodingKey] = []
    /// The key lists of nested keyed containers (``TapeKeyedContainer/extraIndex``); entry 0
    /// is empty, the others live until the next row.
    @exclusivity(unchecked) var extras: [[any CodingKey]] = [[]]
    /// Whether ``decodeRow(_:from:)`` is running (a nested call gets a decoder of its own).
    private var busy = false

    init(tape: JSONTape, bytes: UnsafeBufferPointer<UInt8>) {
        self.tape = tape
        view = TapeView(nodes: tape.unsafeNodes, bytes: bytes)
    }

    /// A decoder for ``decodeRow(_:from:)``, with an empty tape.
    convenience init() {
        self.init(tape: JSONTape(), bytes: UnsafeBufferPointer(start: nil, count: 0))
    }

    /// Decodes `json` (UTF-8 JSON text) as `T`, reusing this decoder's tape and path storage.
    /// - Throws: as ``RowDecoder/decode(_:from:)``.
    func decodeRow<T: Decodable>(_ type: T.Type, from json: Data) throws -> T {
        // Re-entered (a `Decodable` that decodes another row while being decoded): the tape
        // in use must not be overwritten.
        if busy { return try RowDecoder().decode(T.self, from: json) }
        busy = true
        defer {
            busy = false
            view = TapeView(nodes: view.nodes, bytes: UnsafeBufferPointer(start: nil, count: 0))
        }
        return try json.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            do {
                try tape.reparse(bytes)
            } catch {
                throw RowDecoder.notJSON(error)
            }
            view = TapeView(nodes: tape.unsafeNodes, bytes: bytes)
            node = 0
            path.removeAll(keepingCapacity: true)
            if extras.count > 1 { extras.removeSubrange(1...) }
            return try unbox(T.self, at: 0)
        }
    }

    /// The node at `index` of the current tape (an index taken from the tape itself).
    @inline(__always)
    func tapeNode(_ index: Int) -> JSONNode { view[index] }

    var codingPath: [any CodingKey] { path }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard tapeNode(node).kind == .object else { throw mismatch([String: Any].self, at: node, path: path) }
        return KeyedDecodingContainer(TapeKeyedContainer<Key>(decoder: self, object: node, depth: path.count, extra: []))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard tapeNode(node).kind == .array else { throw mismatch([Any].self, at: node, path: path) }
        return TapeUnkeyedContainer(decoder: self, array: node, depth: path.count, extra: [])
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    /// The index in ``extras`` of `extra` (0 when it is empty, the common case: no allocation).
    func register(extra: [any CodingKey]) -> Int {
        if extra.isEmpty { return 0 }
        extras.append(extra)
        return extras.count - 1
    }

    /// The coding path of a container made when the path had `depth` keys, reached through
    /// the nested-container keys `extra`, plus `key`.
    func path(depth: Int, extra: [any CodingKey], _ key: (any CodingKey)?) -> [any CodingKey] {
        var p = Array(path.prefix(depth))
        p.append(contentsOf: extra)
        if let key { p.append(key) }
        return p
    }

    /// Runs `body` with `path` set to the path of a container (`depth`, `extra`), so values
    /// nested in it get the right coding path also after a sibling was decoded.
    func within<R>(depth: Int, extra: [any CodingKey], _ body: () throws -> R) rethrows -> R {
        precondition(path.count >= depth, "a decoding container was used after its decoder returned")
        if extra.isEmpty && path.count == depth { return try body() }
        let saved = path
        path = self.path(depth: depth, extra: extra, nil)
        defer { path = saved }
        return try body()
    }

    /// Decodes the value at `index` as `T`; `key` (nil for the top level) is pushed on the path
    /// while `T` decodes its contents.
    func unbox<T: Decodable>(_ type: T.Type, at index: Int, key: (any CodingKey)? = nil) throws -> T {
        // T is exactly the type checked, so the bit casts are identity conversions.
        if T.self == String.self { return unsafeBitCast(try string(at: index, key), to: T.self) }
        if T.self == Int.self { return unsafeBitCast(try integer(Int.self, at: index, key), to: T.self) }
        if T.self == Double.self { return unsafeBitCast(try double(at: index, key), to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try bool(at: index, key), to: T.self) }
        if T.self == URL.self {
            let s = try string(at: index, key)
            guard let url = URL(string: s) else { throw corrupted(key, "Invalid URL string.") }
            return try cast(url)
        }
        if T.self == Data.self {
            let s = try string(at: index, key)
            guard let data = Data(base64Encoded: s) else { throw corrupted(key, "Encountered Data is not valid Base64.") }
            return try cast(data)
        }
        if T.self == Decimal.self {
            guard tapeNode(index).kind == .number, let d = Decimal(string: tape.numberText(at: index, in: bytes), locale: Locale(identifier: "en_US_POSIX")) else {
                throw mismatch(Decimal.self, at: index, path: pathWith(key))
            }
            return try cast(d)
        }
        let savedNode = node
        node = index
        if let key { path.append(key) }
        defer {
            node = savedNode
            if key != nil { path.removeLast() }
        }
        return try T(from: self)
    }

    private func cast<T, V>(_ v: V) throws -> T {
        guard let t = v as? T else { preconditionFailure("TapeDecoder cast \(V.self) to \(T.self)") }
        return t
    }

    func pathWith(_ key: (any CodingKey)?) -> [any CodingKey] {
        guard let key else { return path }
        return path + [key]
    }

    func corrupted(_ key: (any CodingKey)?, _ message: String) -> DecodingError {
        .dataCorrupted(DecodingError.Context(codingPath: pathWith(key), debugDescription: message))
    }

    /// JSONDecoder's error for a value of the wrong kind: `valueNotFound` for null,
    /// `typeMismatch` otherwise.
    func mismatch(_ type: Any.Type, at index: Int, path: [any CodingKey]) -> DecodingError {
        let found: String
        switch tapeNode(index).kind {
        case .null:
            return .valueNotFound(type, DecodingError.Context(codingPath: path, debugDescription: "Cannot get value of type \(type) -- found null value instead"))
        case .object: found = "a dictionary"
        case .array: found = "an array"
        case .string: found = "a string"
        case .number: found = "number"
        case .true, .false: found = "bool"
        }
        return .typeMismatch(type, DecodingError.Context(codingPath: path, debugDescription: "Expected to decode \(type) but found \(found) instead."))
    }
}
