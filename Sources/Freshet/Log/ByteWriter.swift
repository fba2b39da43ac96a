import Foundation

/// Appends the primitive encodings of the log format (docs/log-format.md): big-endian fixed
/// integers, LEB128 varints, and payload fields (`tag` varint, `length` varint, value bytes).
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    /// A `Data` value that ``raw(_:)-(Data)`` left out of ``bytes`` (see ``defersLargeData``):
    /// it belongs at `offset` of ``bytes``, before the byte that is there now.
    struct Deferred {
        var offset: Int
        var data: Data
    }

    /// With `defersLargeData`, ``raw(_:)-(Data)`` records a `Data` of at least this many bytes
    /// in ``deferred`` instead of copying it.
    static let deferredMinimum = 4096

    /// Whether large `Data` values are left out of ``bytes`` and listed in ``deferred``, so
    /// that the caller copies them once, straight to where the whole encoding goes (a log
    /// record's document into LMDB's page: ``LogRecord/checkedParts()``). Off by default.
    let defersLargeData: Bool
    private(set) var deferred: [Deferred] = []
    private var deferredBytes = 0
    /// The bytes written so far, deferred ones included.
    var count: Int { bytes.count + deferredBytes }

    init(capacity: Int = 64, defersLargeData: Bool = false) {
        self.defersLargeData = defersLargeData
        bytes.reserveCapacity(capacity)
    }

    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { withUnsafeBytes(of: v.bigEndian) { bytes.append(contentsOf: $0) } }
    mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.bigEndian) { bytes.append(contentsOf: $0) } }
    mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.bigEndian) { bytes.append(contentsOf: $0) } }
    mutating func i64(_ v: Int64) { u64(UInt64(bitPattern: v)) }
    mutating func raw<C: Collection>(_ b: C) where C.Element == UInt8 {
        // Contiguous bytes (arrays, `Data`, buffers) are copied in one block, not element by
        // element through the collection's iterator.
        if b.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) != nil { return }
        bytes.append(contentsOf: b)
    }
    mutating func raw(_ d: Data) {
        if defersLargeData && d.count >= Self.deferredMinimum {
            deferred.append(Deferred(offset: bytes.count, data: d))
            deferredBytes += d.count
            return
        }
        d.withUnsafeBytes { bytes.append(contentsOf: $0) }
    }
    mutating func raw(_ b: UnsafeRawBufferPointer) { bytes.append(contentsOf: b) }

    /// Appends `count` bytes that `write` fills through a pointer (it is given exactly those
    /// `count` bytes, zeroed), with room kept for `spare` more bytes after them, so the writes
    /// that follow do not grow the buffer again.
    mutating func raw(count: Int, spare: Int = 0, _ write: (UnsafeMutableRawBufferPointer) -> Void) {
        let start = bytes.count
        bytes.reserveCapacity(start + count + spare)
        bytes.append(contentsOf: repeatElement(0, count: count))
        bytes.withUnsafeMutableBytes { write(UnsafeMutableRawBufferPointer(rebasing: $0[start...])) }
    }

    /// Overwrites the 4 bytes at `offset` (written earlier, e.g. by `u32(0)`) with `v`, big-endian.
    /// (`offset` counts the bytes of ``bytes``: a deferred value before it is not counted.)
    mutating func patchU32(_ v: UInt32, at offset: Int) {
        precondition(offset >= 0 && offset + 4 <= bytes.count, "patchU32 outside the bytes written")
        bytes[offset] = UInt8(truncatingIfNeeded: v >> 24)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: v >> 16)
        bytes[offset + 2] = UInt8(truncatingIfNeeded: v >> 8)
        bytes[offset + 3] = UInt8(truncatingIfNeeded: v)
    }

    /// The number of bytes ``varint(_:)`` writes for `value`.
    static func varintLength(_ value: UInt64) -> Int {
        var n = 1
        var v = value
        while v >= 0x80 { v >>= 7; n += 1 }
        return n
    }

    /// Writes the bytes ``varint(_:)`` appends for `value` into `out` from `offset` (which has
    /// room for ``varintLength(_:)`` of them); returns the offset after the last.
    static func writeVarint(_ value: UInt64, into out: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        var v = value
        var at = offset
        while v >= 0x80 {
            out[at] = UInt8(v & 0x7F) | 0x80
            at += 1
            v >>= 7
        }
        out[at] = UInt8(v)
        return at + 1
    }

    /// Unsigned LEB128: 7 bits a byte, low bits first, high bit set on every byte but the last.
    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    // MARK: Payload fields

    mutating func field(_ tag: UInt64, uint v: UInt64) {
        varint(tag)
        var inner = ByteWriter(capacity: 10)
        inner.varint(v)
        varint(UInt64(inner.bytes.count))
        raw(inner.bytes)
    }
    /// Signed integers are zigzag-encoded (0, -1, 1, -2 … → 0, 1, 2, 3 …) then written as a varint.
    mutating func field(_ tag: UInt64, int v: Int64) {
        field(tag, uint: UInt64(bitPattern: (v << 1) ^ (v >> 63)))
    }
    mutating func field(_ tag: UInt64, bool v: Bool) { field(tag, uint: v ? 1 : 0) }
    mutating func field(_ tag: UInt64, bytes b: some Collection<UInt8>) {
        varint(tag)
        varint(UInt64(b.count))
        raw(b)
    }
    mutating func field(_ tag: UInt64, data d: Data) {
        varint(tag)
        varint(UInt64(d.count))
        raw(d)
    }
    mutating func field(_ tag: UInt64, string s: String) {
        var s = s
        s.withUTF8 { field(tag, bytes: $0) }
    }
    /// A time is microseconds since 1970-01-01T00:00:00Z, as a signed field.
    mutating func field(_ tag: UInt64, time: Date) { field(tag, int: Self.micros(time)) }
    mutating func field(_ tag: UInt64, message body: (inout ByteWriter) -> Void) {
        var inner = ByteWriter()
        body(&inner)
        field(tag, bytes: inner.bytes)
    }

    // Optional helpers: an absent value writes no field.
    mutating func field(_ tag: UInt64, string s: String?) { if let s { field(tag, string: s) } }
    mutating func field(_ tag: UInt64, time: Date?) { if let time { field(tag, time: time) } }
    mutating func field(_ tag: UInt64, int v: Int64?) { if let v { field(tag, int: v) } }

    static func micros(_ date: Date) -> Int64 {
        let us = (date.timeIntervalSince1970 * 1_000_000).rounded()
        // A date from a caller may be NaN (Date(timeIntervalSince1970: .nan)): stored as the epoch.
        if us.isNaN { return 0 }
        if us >= 9.2e18 { return Int64.max }
        if us <= -9.2e18 { return Int64.min }
        return Int64(us)
    }
}
