/// The members of one object on the tape, looked up by key (the first duplicate wins, as in JSONDecoder).
///
/// No reference-counted fields: `KeyedDecodingContainer`'s box copies its container out of a
/// class property on every `decode(_:forKey:)`, and a retain and release of the decoder and
/// of a key array per decoded member was 5–6% of a W3 profile (docs/performance.md, round 6).
/// The decoder is therefore held `unowned(unsafe)`: a container lives inside the
/// `init(from:)` it was made for, while its decoder is kept alive by the decode call that
/// runs that `init(from:)`; a container kept and used after that call is a programmer error.
/// Even so, each call on the decoder retains it for the call's length, so a member that
/// decodes as it should (a string, an integer, a bool, a double) is read from ``view`` alone;
/// the decoder is called for nested values and to build errors.
struct TapeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    unowned(unsafe) let decoder: TapeDecoder
    /// The decoder's ``TapeDecoder/view`` of the row, valid as long as the container is.
    let view: TapeView
    /// The tape index of the object.
    let object: Int
    /// The decoder's path length when the container was made.
    let depth: Int
    /// Which of the decoder's ``TapeDecoder/extras`` holds the keys of nested containers
    /// between the decoder's path and this container (0: none).
    let extraIndex: Int

    init(decoder: TapeDecoder, object: Int, depth: Int, extra: [any CodingKey]) {
        self.decoder = decoder
        self.view = decoder.view
        self.object = object
        self.depth = depth
        self.extraIndex = decoder.register(extra: extra)
    }

    /// The keys of nested containers between the decoder's path and this container.
    private var extra: [any CodingKey] { decoder.extras[extraIndex] }

    var codingPath: [any CodingKey] { decoder.path(depth: depth, extra: extra, nil) }

    var allKeys: [Key] {
        var keys: [Key] = []
        var k = object + 1
        for _ in 0..<Int(view[object].count) {
            if let key = Key(stringValue: JSONTape.text(of: view[k], in: view.bytes)) { keys.append(key) }
            k = Int(view[k + 1].next)
        }
        return keys
    }

    func contains(_ key: Key) -> Bool { find(key) != nil }

    /// The tape index of the value of `key`, or nil.
    private func find(_ key: Key) -> Int? {
        view.firstMember(key.stringValue, of: object)
    }

    private func value(_ key: Key) throws -> Int {
        guard let index = find(key) else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(codingPath: codingPath, debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return index
    }

    private func path(_ key: Key) -> [any CodingKey] { decoder.path(depth: depth, extra: extra, key) }

    func decodeNil(forKey key: Key) throws -> Bool { view[try value(key)].kind == .null }
    // The common members first from the view; anything else (and every error) through the
    // decoder, which gives JSONDecoder's errors and paths.
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        if let index = find(key), let b = bool(at: index) { return b }
        return try withDepth { try decoder.bool(at: value(key), key) }
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        if let index = find(key), let s = view.string(at: index) { return s }
        return try withDepth { try decoder.string(at: value(key), key) }
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        if let index = find(key), let d = view.smallIntegerAsDouble(at: index) { return d }
        return try withDepth { try decoder.double(at: value(key), key) }
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try withDepth { try decoder.float(at: value(key), key) } }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        if let index = find(key), let n = view.smallInteger(at: index) { return Int(n) }
        return try withDepth { try decoder.integer(Int.self, at: value(key), key) }
    }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try withDepth { try decoder.integer(Int8.self, at: value(key), key) } }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try withDepth { try decoder.integer(Int16.self, at: value(key), key) } }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try withDepth { try decoder.integer(Int32.self, at: value(key), key) } }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try withDepth { try decoder.integer(Int64.self, at: value(key), key) } }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try withDepth { try decoder.integer(UInt.self, at: value(key), key) } }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try withDepth { try decoder.integer(UInt8.self, at: value(key), key) } }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try withDepth { try decoder.integer(UInt16.self, at: value(key), key) } }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try withDepth { try decoder.integer(UInt32.self, at: value(key), key) } }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try withDepth { try decoder.integer(UInt64.self, at: value(key), key) } }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try withDepth { try decoder.unbox(T.self, at: value(key), key: key) }
    }

    /// Optional members in one lookup: absent or null is nil.
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let index = find(key), view[index].kind != .null else { return nil }
        if let s = view.string(at: index) { return s }
        return try withDepth { try decoder.string(at: index, key) }
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        guard let index = find(key), view[index].kind != .null else { return nil }
        if let n = view.smallInteger(at: index) { return Int(n) }
        return try withDepth { try decoder.integer(Int.self, at: index, key) }
    }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard let index = find(key), view[index].kind != .null else { return nil }
        if let b = bool(at: index) { return b }
        return try withDepth { try decoder.bool(at: index, key) }
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        guard let index = find(key), view[index].kind != .null else { return nil }
        if let d = view.smallIntegerAsDouble(at: index) { return d }
        return try withDepth { try decoder.double(at: index, key) }
    }

    /// `true` or `false` at `index`, or nil for any other value.
    @inline(__always)
    private func bool(at index: Int) -> Bool? {
        switch view[index].kind {
        case .true: true
        case .false: false
        default: nil
        }
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let index = find(key), view[index].kind != .null else { return nil }
        return try withDepth { try decoder.unbox(T.self, at: index, key: key) }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        let index = try value(key)
        guard view[index].kind == .object else { throw decoder.mismatch([String: Any].self, at: index, path: path(key)) }
        return KeyedDecodingContainer(TapeKeyedContainer<NestedKey>(decoder: decoder, object: index, depth: depth, extra: extra + [key]))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let index = try value(key)
        guard view[index].kind == .array else { throw decoder.mismatch([Any].self, at: index, path: path(key)) }
        return TapeUnkeyedContainer(decoder: decoder, array: index, depth: depth, extra: extra + [key])
    }

    func superDecoder() throws -> any Decoder { try superDecoder(key: JSONSuperKey.super, index: find(JSONSuperKey.super.stringValue)) }
    func superDecoder(forKey key: Key) throws -> any Decoder { try superDecoder(key: key, index: find(key)) }

    private func find(_ name: String) -> Int? { view.firstMember(name, of: object) }

    private func superDecoder(key: any CodingKey, index: Int?) throws -> any Decoder {
        guard let index else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(codingPath: codingPath, debugDescription: "No value associated with key \(key.stringValue)."))
        }
        let nested = TapeDecoder(tape: decoder.tape, bytes: decoder.bytes)
        nested.node = index
        nested.path = path(depth: key)
        return nested
    }

    private func path(depth key: any CodingKey) -> [any CodingKey] { decoder.path(depth: depth, extra: extra, key) }

    @inline(__always)
    private func withDepth<R>(_ body: () throws -> R) rethrows -> R {
        if extraIndex == 0 && decoder.path.count == depth { return try body() }
        return try decoder.within(depth: depth, extra: extra, body)
    }
}

/// The key `superDecoder()` reads: `super`.
enum JSONSuperKey: String, CodingKey {
    case `super`
}
