import Foundation

/// Why bytes could not be read as the log format; carried by ``StoreError/corruptRecord``.
struct FormatError: Error, Sendable, CustomStringConvertible {
    var description: String { reason }
    var reason: String
}

/// Reads what ``ByteWriter`` writes, checking every length against the bytes that remain.
///
/// The reader borrows its bytes (an `UnsafeRawBufferPointer`): it is valid only inside the
/// `withUnsafeBytes` (or the read transaction) that lent them, so decoders make one, read
/// and copy out what they keep, and let it go. Reading a field is a bounds check and a load,
/// with no array retained or released per field; before issue 8's speed round 4 it held a
/// `[UInt8]`, and every field read and nested reader retained and released that array
/// (docs/performance.md, W5).
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    private(set) var offset: Int
    let end: Int

    /// Reads all of `bytes`.
    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        self.offset = 0
        self.end = bytes.count
    }

    /// Reads `bytes[0 ..< end]`.
    init(_ bytes: UnsafeRawBufferPointer, end: Int) {
        precondition(end >= 0 && end <= bytes.count, "ByteReader end \(end) outside 0...\(bytes.count)")
        self.bytes = bytes
        self.offset = 0
        self.end = end
    }

    /// Reads `bytes[start ..< end]`.
    init(_ bytes: UnsafeRawBufferPointer, from start: Int, end: Int) {
        precondition(start >= 0 && start <= end && end <= bytes.count, "ByteReader range \(start)..<\(end) outside 0...\(bytes.count)")
        self.init(bytes: bytes, offset: start, end: end)
    }

    private init(bytes: UnsafeRawBufferPointer, offset: Int, end: Int) {
        self.bytes = bytes
        self.offset = offset
        self.end = end
    }

    var isAtEnd: Bool { offset >= end }
    var remaining: Int { end - offset }

    // `what` names the field in an error only: an autoclosure, so a name built per call
    // ("field \(tag)") costs nothing unless the bytes are bad.
    mutating func need(_ n: Int, _ what: @autoclosure () -> String) throws(FormatError) {
        if n < 0 || remaining < n { throw FormatError(reason: "truncated \(what()): needs \(n) bytes, \(remaining) left") }
    }

    mutating func u8(_ what: @autoclosure () -> String = "byte") throws(FormatError) -> UInt8 {
        try need(1, what())
        defer { offset += 1 }
        return bytes[offset]
    }
    /// A big-endian integer of `T`'s size, loaded in one go (after the length check).
    private mutating func fixed<T: FixedWidthInteger>(_: T.Type, _ what: String) throws(FormatError) -> T {
        try need(MemoryLayout<T>.size, what)
        defer { offset += MemoryLayout<T>.size }
        return T(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }
    mutating func u16(_ what: String) throws(FormatError) -> UInt16 { try fixed(UInt16.self, what) }
    mutating func u32(_ what: String) throws(FormatError) -> UInt32 { try fixed(UInt32.self, what) }
    mutating func u64(_ what: String) throws(FormatError) -> UInt64 { try fixed(UInt64.self, what) }
    /// The next `n` bytes (borrowed like the reader's own); skips them here.
    mutating func bytes(_ n: Int, _ what: String) throws(FormatError) -> UnsafeRawBufferPointer {
        try need(n, what)
        defer { offset += n }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + n])
    }

    /// A reader over the next `n` bytes (sharing the storage, no copy); skips them here.
    mutating func reader(_ n: Int, _ what: String) throws(FormatError) -> ByteReader {
        try need(n, what)
        defer { offset += n }
        return ByteReader(bytes: bytes, offset: offset, end: offset + n)
    }

    mutating func varint(_ what: @autoclosure () -> String = "varint") throws(FormatError) -> UInt64 {
        // Tags, lengths under 128 and small numbers are one byte: read without the loop.
        if offset < end, bytes[offset] < 0x80 {
            defer { offset += 1 }
            return UInt64(bytes[offset])
        }
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try u8(what())
            if shift == 63 && b > 1 { throw FormatError(reason: "\(what()) overflows 64 bits") }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw FormatError(reason: "\(what()) overflows 64 bits") }
        }
    }

    /// Visits every payload field in order, handing `body` the tag and a reader over the value.
    /// Unknown tags are the caller's to skip (by not reading them), which keeps old readers
    /// working on payloads that later versions extend.
    mutating func fields(_ body: (UInt64, inout FieldValue) throws -> Void) throws {
        while !isAtEnd {
            let tag = try varint("field tag")
            let length = try varint("field length")
            guard length <= UInt64(remaining) else {
                throw FormatError(reason: "field \(tag) claims \(length) bytes, \(remaining) left")
            }
            var value = FieldValue(reader: ByteReader(bytes: bytes, offset: offset, end: offset + Int(length)), tag: tag)
            offset += Int(length)
            try body(tag, &value)
        }
    }
}

/// The value bytes of one payload field, read as the type its tag says.
struct FieldValue {
    var reader: ByteReader
    let tag: UInt64

    /// The value's bytes (borrowed like the reader's).
    var raw: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: reader.bytes[reader.offset..<reader.end]) }
    var data: Data {
        guard let base = raw.baseAddress else { return Data() }
        return Data(bytes: base, count: raw.count)
    }
    var bytes: [UInt8] { Array(raw) }

    mutating func uint() throws(FormatError) -> UInt64 { try reader.varint("field \(tag)") }
    mutating func int() throws(FormatError) -> Int64 {
        let z = try uint()
        return Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))
    }
    mutating func int32() throws(FormatError) -> Int {
        let v = try int()
        guard v >= Int64(Int32.min), v <= Int64(Int32.max) else { throw FormatError(reason: "field \(tag) out of range: \(v)") }
        return Int(v)
    }
    mutating func bool() throws(FormatError) -> Bool { try uint() != 0 }
    func string() throws(FormatError) -> String {
        guard let s = String.validatingUTF8(raw) else {
            throw FormatError(reason: "field \(tag) is not valid UTF-8")
        }
        return s
    }
    mutating func time() throws(FormatError) -> Date {
        Date(timeIntervalSince1970: Double(try int()) / 1_000_000)
    }
    /// A nested message: its own fields.
    var message: ByteReader { reader }
}

extension String {
    /// `bytes` as a string when they are valid UTF-8, else nil. ASCII bytes (most collection
    /// names, row IDs and field strings) are checked 8 at a time and skip the generic
    /// validating initializer, which was 3% of a `replay` (docs/performance.md, W5).
    @inline(__always)
    static func validatingUTF8(_ bytes: UnsafeRawBufferPointer) -> String? {
        if isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Whether every byte of `bytes` is below 0x80, checked 8 bytes at a time.
    @inline(__always)
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        var high: UInt64 = 0
        while i + 8 <= bytes.count {
            high |= bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < bytes.count {
            high |= UInt64(bytes[i])
            i += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }
}
