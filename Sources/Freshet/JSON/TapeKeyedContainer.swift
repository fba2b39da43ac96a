/// The members of one object on the tape, looked up by key (the first duplicate wins, as in JSONDecoder).
///
/// No reference-counted fields: `KeyedDecodingContainer`'s box copies its container out of a
/// class property on every `decode(_:forKey:)`, and a retain and release of the decoder and
/// of a key array per decoded member was 5–6% of a W3 profile (docs/performance.md, round 6).
/// The decoder is therefore held `unowned(unsafe)`: a container lives inside the
/// `init(from:)` it was made for, while its decoder is kept alive by the decode call that
/// runs that `init(from:)`; a container kept and used after that call is a programmer error.
struct TapeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    unowned(unsafe) let decoder: TapeDecoder
    /// The tape index of the object.
    let object: Int
    /// The decoder's path length when the container was made.
    let depth: Int
    /// Which of the decoder's ``TapeDecoder/extras`` holds the keys of nested containers
    /// between the decoder's path and this container (0: none).
    let extraIndex: Int

    init(decoder: TapeDecoder, object: Int, depth: Int, extra: [any CodingKey]) {
        self.decoder = decoder
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
        for _ in 0..<Int(decoder.tapeNode(object).count) {
            if let key = Key(stringValue: JSONTape.text(of: decoder.tapeNode(k), in: decoder.bytes)) { keys.append(key) }
            k = Int(decoder.tapeNode(k + 1).next)
        }
        return keys
    }

    func contains(_ key: Key) -> Bool { find(key) != nil }

    /// The tape index of the value of `key`, or nil.
    private func find(_ key: Key) -> Int? {
        decoder.firstMember(key.stringValue, of: object)
    }

    private func value(_ key: Key) throws -> Int {
        guard let index = find(key) else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(codingPath: codingPath, debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return index
    }

    private func path(_ key: Key) -> [any CodingKey] { decoder.path(depth: depth, extra: extra, key) }

    func decodeNil(forKey key: Key) throws -> Bool { decoder.tapeNode(try value(key)).kind == .null }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try withDepth { try decoder.bool(at: value(key), key) } }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try withDepth { try decoder.string(at: value(key), key) } }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try withDepth { try decoder.double(at: value(key), key) } }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try withDepth { try decoder.float(at: value(key), key) } }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try withDepth { try decoder.integer(Int.self, at: value(key), key) } }
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
        guard let index = find(key), decoder.tapeNode(index).kind != .null else { return nil }
        return try withDepth { try decoder.string(at: index, key) }
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        guard let index = find(key), decoder.tapeNode(index).kind != .null else { return nil }
        return try withDepth { try decoder.integer(Int.self, at: index, key) }
    }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard let index = find(key), decoder.tapeNode(index).kind != .null else { return nil }
        return try withDepth { try decoder.bool(at: index, key) }
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        guard let index = find(key), decoder.tapeNode(index).kind != .null else { return nil }
        return try withDepth { try decoder.double(at: index, key) }
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let index = find(key), decoder.tapeNode(index).kind != .null else { return nil }
        return try withDepth { try decoder.unbox(T.self, at: index, key: key) }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        let index = try value(key)
        guard decoder.tapeNode(index).kind == .object else { throw decoder.mismatch([String: Any].self, at: index, path: path(key)) }
        return KeyedDecodingContainer(TapeKeyedContainer<NestedKey>(decoder: decoder, object: index, depth: depth, extra: extra + [key]))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let index = try value(key)
        guard decoder.tapeNode(index).kind == .array else { throw decoder.mismatch([Any].self, at: index, path: path(key)) }
        return TapeUnkeyedContainer(decoder: decoder, array: index, depth: depth, extra: extra + [key])
    }

    func superDecoder() throws -> any Decoder { try superDecoder(key: JSONSuperKey.super, index: find(JSONSuperKey.super.stringValue)) }
    func superDecoder(forKey key: Key) throws -> any Decoder { try superDecoder(key: key, index: find(key)) }

    private func find(_ name: String) -> Int? { decoder.firstMember(name, of: object) }

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
