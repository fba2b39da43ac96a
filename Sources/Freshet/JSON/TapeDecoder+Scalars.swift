import Foundation

extension TapeDecoder {
    /// `key` is the coding key of the value at `index` for error paths (nil: the current value).
    func string(at index: Int, _ key: (any CodingKey)?) throws -> String {
        let node = tapeNode(index)
        guard node.kind == .string else { throw mismatch(String.self, at: index, path: pathWith(key)) }
        return JSONTape.text(of: node, in: bytes)
    }

    func bool(at index: Int, _ key: (any CodingKey)?) throws -> Bool {
        switch tapeNode(index).kind {
        case .true: return true
        case .false: return false
        case .null:
            // JSONDecoder reports a null Bool as a type mismatch, unlike other types.
            throw DecodingError.typeMismatch(Bool.self, DecodingError.Context(codingPath: pathWith(key), debugDescription: "Expected to decode Bool but found null instead."))
        default: throw mismatch(Bool.self, at: index, path: pathWith(key))
        }
    }

    func double(at index: Int, _ key: (any CodingKey)?) throws -> Double {
        let node = tapeNode(index)
        guard node.kind == .number else { throw mismatch(Double.self, at: index, path: pathWith(key)) }
        if node.end - node.start <= 15, let d = view.smallIntegerAsDouble(at: index) { return d }
        let text = tape.numberText(at: index, in: bytes)
        guard let d = Double(text), d.isFinite else {
            throw corrupted(key, "Number \(text) is not representable in Swift.")
        }
        return d
    }

    func float(at index: Int, _ key: (any CodingKey)?) throws -> Float {
        let d = try double(at: index, key)
        guard abs(d) <= Double(Float.greatestFiniteMagnitude) else {
            throw corrupted(key, "Number \(tape.numberText(at: index, in: bytes)) does not fit in Float.")
        }
        return Float(d)
    }

    func integer<T: FixedWidthInteger>(_ type: T.Type, at index: Int, _ key: (any CodingKey)?) throws -> T {
        let node = tapeNode(index)
        guard node.kind == .number else { throw mismatch(T.self, at: index, path: pathWith(key)) }
        if node.flag {
            if let n = view.smallInteger(at: index), let v = T(exactly: n) { return v }
            if let v = T(tape.numberText(at: index, in: bytes)) { return v }
        } else if let d = Double(tape.numberText(at: index, in: bytes)), let v = T(exactly: d) {
            return v
        }
        throw corrupted(key, "Number \(tape.numberText(at: index, in: bytes)) is not representable in Swift.")
    }
}
