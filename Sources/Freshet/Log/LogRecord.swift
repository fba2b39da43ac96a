import Foundation

/// One record of the log, as stored under its LSN: a versioned, self-describing, checksummed
/// envelope around an event payload.
///
/// Layout of format version 1 (all integers big-endian; docs/log-format.md is the reference):
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 1 | format version (1) |
/// | 1 | 1 | kind (``EventKind`` raw value) |
/// | 2 | 2 | flags (0; readers reject other values) |
/// | 4 | 8 | LSN |
/// | 12 | 8 | timestamp: signed microseconds since 1970-01-01T00:00:00Z |
/// | 20 | 2 | collection name length *n* (bytes) |
/// | 22 | *n* | collection name, UTF-8 |
/// | 22+*n* | 4 | payload length *m* (bytes) |
/// | 26+*n* | *m* | payload (fields; see ``Event``) |
/// | 26+*n*+*m* | 4 | CRC-32C of bytes 0 ..< 26+*n*+*m* |
public struct LogRecord: Sendable, Hashable {
    /// The record format this code writes.
    public static let formatVersion: UInt8 = 1
    /// Bytes in a record besides the collection name and the payload.
    static let overhead = 30

    public var lsn: LSN
    /// When the event was appended, from the store's injected clock (microsecond precision).
    public var timestamp: Date
    public var collection: String
    public var event: Event

    public init(lsn: LSN, timestamp: Date, collection: String, event: Event) {
        self.lsn = lsn
        self.timestamp = timestamp
        self.collection = collection
        self.event = event
    }

    public var kind: EventKind { event.kind }

    /// The record's bytes in format version 1.
    ///
    /// A collection name longer than 65,535 bytes or a payload of 4 GiB or more cannot be
    /// written in this format: a programmer error here (a precondition). The store appends
    /// through ``checkedEncoding()``, which throws instead.
    public func encoded() -> [UInt8] {
        do {
            return try checkedEncoding()
        } catch {
            preconditionFailure(error.message)
        }
    }

    /// The record's bytes in format version 1, or ``StoreError/invalidEvent`` when a length
    /// does not fit its field (collection name: 2 bytes, payload: 4 bytes).
    func checkedEncoding() throws(StoreError) -> [UInt8] {
        let name = Array(collection.utf8)
        guard name.count <= Int(UInt16.max) else {
            throw StoreError(.invalidEvent, "collection name of \(name.count) bytes does not fit a log record (at most \(UInt16.max))", lsn: lsn)
        }
        // The payload is written in place after the header; its length is filled in after.
        var w = ByteWriter(capacity: Self.overhead + name.count + event.encodedPayloadCapacity)
        w.u8(Self.formatVersion)
        w.u8(kind.rawValue)
        w.u16(0)
        w.u64(lsn.rawValue)
        w.i64(ByteWriter.micros(timestamp))
        w.u16(UInt16(name.count))
        w.raw(name)
        let lengthOffset = w.bytes.count
        w.u32(0)
        event.encodePayload(into: &w)
        let payloadCount = w.bytes.count - lengthOffset - 4
        guard payloadCount <= Int(UInt32.max) - Self.overhead - name.count else {
            throw StoreError(.invalidEvent, "\(kind.name) for \(collection) is \(payloadCount) bytes; a log record holds less than 4 GiB", lsn: lsn)
        }
        w.patchU32(UInt32(payloadCount), at: lengthOffset)
        w.u32(CRC32C.checksum(w.bytes))
        return w.bytes
    }

    /// The collection name in a record's header (bytes 20 ..< 22+*n*), read without checking
    /// the checksum; nil when the bytes are too short or the name is not UTF-8.
    static func collectionName(in bytes: [UInt8]) -> String? {
        guard bytes.count >= 22 else { return nil }
        let n = Int(bytes[20]) << 8 | Int(bytes[21])
        guard bytes.count >= 22 + n else { return nil }
        return String(validating: bytes[22..<(22 + n)], as: UTF8.self)
    }

    /// Decodes a record, checking version, flags, lengths and checksum.
    ///
    /// - Parameter expectedLSN: the key the record was stored under, when known; a record
    ///   whose LSN differs is reported as corrupt.
    /// - Throws: ``StoreError/checksumMismatch``, ``StoreError/unsupportedFormat``,
    ///   ``StoreError/unknownEventKind`` or ``StoreError/corruptRecord``; never crashes on
    ///   malformed bytes.
    public static func decode(_ bytes: [UInt8], expectedLSN: LSN? = nil) throws(StoreError) -> LogRecord {
        try bytes.withUnsafeBytes { raw in
            Result { () throws(StoreError) in try decode(raw, expectedLSN: expectedLSN) }
        }.get()
    }

    /// The same decoding, reading `bytes` in place: a value lent by a read
    /// transaction, say, without copying it into an array first. Nothing of the result refers
    /// to `bytes`: every string and `Data` is copied out.
    static func decode(_ bytes: UnsafeRawBufferPointer, expectedLSN: LSN? = nil) throws(StoreError) -> LogRecord {
        // Built only for an error: formatting the LSN for every record was a string
        // allocated and freed per record (docs/performance.md, W5, round 4).
        func at() -> String { expectedLSN.map { "record at LSN \($0)" } ?? "record" }
        guard bytes.count >= overhead else {
            throw StoreError(.corruptRecord, "\(at()) is \(bytes.count) bytes, shorter than the \(overhead)-byte minimum", lsn: expectedLSN)
        }
        let body = UnsafeRawBufferPointer(rebasing: bytes[0..<bytes.count - 4])
        let stored = UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: bytes.count - 4, as: UInt32.self))
        let computed = CRC32C.checksum(body)
        guard stored == computed else {
            throw StoreError(.checksumMismatch, "\(at()) fails its CRC-32C: stored \(hex(stored)), computed \(hex(computed))", lsn: expectedLSN)
        }
        var r = ByteReader(bytes, end: body.count)
        do {
            let version = try r.u8("format version")
            guard version == formatVersion else {
                throw StoreError(.unsupportedFormat, "\(at()) has format version \(version); this Freshet reads version \(formatVersion)", lsn: expectedLSN)
            }
            let kindByte = try r.u8("kind")
            guard let kind = EventKind(rawValue: kindByte) else {
                throw StoreError(.unknownEventKind, "\(at()) has unknown event kind \(kindByte)", lsn: expectedLSN)
            }
            let flags = try r.u16("flags")
            guard flags == 0 else {
                throw StoreError(.unsupportedFormat, "\(at()) has flags \(flags); this Freshet knows none", lsn: expectedLSN)
            }
            let lsn = LSN(try r.u64("LSN"))
            if let expectedLSN, expectedLSN != lsn {
                throw StoreError(.corruptRecord, "\(at()) says it is LSN \(lsn)", lsn: expectedLSN)
            }
            let micros = Int64(bitPattern: try r.u64("timestamp"))
            let nameLength = Int(try r.u16("collection length"))
            guard let collection = String.validatingUTF8(try r.bytes(nameLength, "collection")) else {
                throw StoreError(.corruptRecord, "\(at()) has a collection name that is not UTF-8", lsn: lsn)
            }
            let payloadLength = Int(try r.u32("payload length"))
            let payload = try r.reader(payloadLength, "payload")
            guard r.isAtEnd else {
                throw StoreError(.corruptRecord, "\(at()) has \(r.remaining) bytes after its payload", lsn: lsn)
            }
            let event = try Event.decode(kind: kind, payload: payload)
            return LogRecord(lsn: lsn, timestamp: Date(timeIntervalSince1970: Double(micros) / 1_000_000), collection: collection, event: event)
        } catch let error as StoreError {
            throw error
        } catch let error as FormatError {
            throw StoreError(.corruptRecord, "\(at()): \(error.reason)", lsn: expectedLSN)
        } catch {
            throw StoreError(.corruptRecord, "\(at()): \(error)", lsn: expectedLSN)
        }
    }

    private static func hex(_ v: UInt32) -> String {
        let s = String(v, radix: 16)
        return "0x" + String(repeating: "0", count: 8 - s.count) + s
    }
}
