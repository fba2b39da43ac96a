/// The elements of one array on the tape, read in order.
struct TapeUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: TapeDecoder
    let array: Int
    let depth: Int
    /// The keys of nested containers between the decoder's path and this container.
    let extra: [any CodingKey]
    let count: Int?
    private(set) var currentIndex = 0
    /// The tape index of the element at `currentIndex`.
    private var cursor: Int

    init(decoder: TapeDecoder, array: Int, depth: Int, extra: [any CodingKey]) {
        self.decoder = decoder
        self.array = array
        self.depth = depth
        self.extra = extra
        self.count = Int(decoder.tapeNode(array).count)
        self.cursor = array + 1
    }

    var codingPath: [any CodingKey] { decoder.path(depth: depth, extra: extra, nil) }
    var isAtEnd: Bool { currentIndex >= (count ?? 0) }

    private var key: JSONIndexKey { JSONIndexKey(index: currentIndex) }

    /// The current element's index; moves on only after `read` succeeds.
    private mutating func next<T>(_ type: T.Type, _ read: (TapeDecoder, Int, JSONIndexKey) throws -> T) throws -> T {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(T.self, DecodingError.Context(codingPath: decoder.path(depth: depth, extra: extra, key), debugDescription: "Unkeyed container is at end."))
        }
        let decoder = self.decoder, cursor = self.cursor, key = self.key
        let value = try decoder.within(depth: depth, extra: extra) { try read(decoder, cursor, key) }
        self.cursor = Int(decoder.tapeNode(cursor).next)
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any?.self, DecodingError.Context(codingPath: decoder.path(depth: depth, extra: extra, key), debugDescription: "Unkeyed container is at end."))
        }
        guard decoder.tapeNode(cursor).kind == .null else { return false }
        cursor = Int(decoder.tapeNode(cursor).next)
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(Bool.self) { try $0.bool(at: $1, $2) } }
    mutating func decode(_ type: String.Type) throws -> String { try next(String.self) { try $0.string(at: $1, $2) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(Double.self) { try $0.double(at: $1, $2) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(Float.self) { try $0.float(at: $1, $2) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(Int.self) { try $0.integer(Int.self, at: $1, $2) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(Int8.self) { try $0.integer(Int8.self, at: $1, $2) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(Int16.self) { try $0.integer(Int16.self, at: $1, $2) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(Int32.self) { try $0.integer(Int32.self, at: $1, $2) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(Int64.self) { try $0.integer(Int64.self, at: $1, $2) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(UInt.self) { try $0.integer(UInt.self, at: $1, $2) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(UInt8.self) { try $0.integer(UInt8.self, at: $1, $2) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(UInt16.self) { try $0.integer(UInt16.self, at: $1, $2) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(UInt32.self) { try $0.integer(UInt32.self, at: $1, $2) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(UInt64.self) { try $0.integer(UInt64.self, at: $1, $2) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try next(T.self) { decoder, index, key in
            try decoder.unbox(T.self, at: index, key: key)
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let depth = self.depth, extra = self.extra
        return try next(KeyedDecodingContainer<NestedKey>.self) { decoder, index, key in
            guard decoder.tapeNode(index).kind == .object else { throw decoder.mismatch([String: Any].self, at: index, path: decoder.path(depth: depth, extra: extra, key)) }
            return KeyedDecodingContainer(TapeKeyedContainer<NestedKey>(decoder: decoder, object: index, depth: depth, extra: extra + [key]))
        }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let depth = self.depth, extra = self.extra
        return try next((any UnkeyedDecodingContainer).self) { decoder, index, key in
            guard decoder.tapeNode(index).kind == .array else { throw decoder.mismatch([Any].self, at: index, path: decoder.path(depth: depth, extra: extra, key)) }
            return TapeUnkeyedContainer(decoder: decoder, array: index, depth: depth, extra: extra + [key])
        }
    }

    mutating func superDecoder() throws -> any Decoder {
        let depth = self.depth, extra = self.extra
        return try next((any Decoder).self) { decoder, index, key in
            let nested = TapeDecoder(tape: decoder.tape, bytes: decoder.bytes)
            nested.node = index
            nested.path = decoder.path(depth: depth, extra: extra, key)
            return nested
        }
    }
}
