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
        var w = try encodedWithoutChecksum(defersLargeData: false)
        w.u32(CRC32C.checksum(w.bytes))
        return w.bytes
    }

    /// The bytes of ``checkedEncoding()`` in parts, to be written once to where they are
    /// stored (the store's writer: into the space LMDB reserves for the record), so a fetched
    /// document is not first copied into a buffer of the record's own; the checksum is
    /// computed while writing. Throws as ``checkedEncoding()``.
    func checkedParts() throws(StoreError) -> EncodedParts {
        EncodedParts(writer: try encodedWithoutChecksum(defersLargeData: true))
    }

    /// Everything but the trailing CRC-32C; with `defersLargeData`, rows' JSON of 4 KiB or
    /// more is left out of the writer's bytes and listed with where it belongs.
    private func encodedWithoutChecksum(defersLargeData: Bool) throws(StoreError) -> ByteWriter {
        let name = Array(collection.utf8)
        guard name.count <= Int(UInt16.max) else {
            throw StoreError(.invalidEvent, "collection name of \(name.count) bytes does not fit a log record (at most \(UInt16.max))", lsn: lsn)
        }
        // The payload is written in place after the header; its length is filled in after.
        // (Deferred data is not in the buffer, so it is sized for the rest.)
        let capacity = defersLargeData ? 512 : Self.overhead + name.count + event.encodedPayloadCapacity
        var w = ByteWriter(capacity: capacity, defersLargeData: defersLargeData)
        w.u8(Self.formatVersion)
        w.u8(kind.rawValue)
        w.u16(0)
        w.u64(lsn.rawValue)
        w.i64(ByteWriter.micros(timestamp))
        w.u16(UInt16(name.count))
        w.raw(name)
        let lengthOffset = w.count
        w.u32(0)
        event.encodePayload(into: &w)
        let payloadCount = w.count - lengthOffset - 4
        guard payloadCount <= Int(UInt32.max) - Self.overhead - name.count else {
            throw StoreError(.invalidEvent, "\(kind.name) for \(collection) is \(payloadCount) bytes; a log record holds less than 4 GiB", lsn: lsn)
        }
        // Nothing is deferred before the payload, so the offset is one in `w.bytes` too.
        w.patchU32(UInt32(payloadCount), at: lengthOffset)
        return w
    }

    /// A record's bytes as ``checkedParts()`` gives them: ``count`` bytes, written by
    /// ``write(into:)``.
    struct EncodedParts {
        fileprivate let writer: ByteWriter

        /// The record's length in bytes, its checksum included.
        var count: Int { writer.count + 4 }

        /// Writes the record — the bytes ``LogRecord/checkedEncoding()`` returns — into
        /// `out`, which holds exactly ``count`` bytes. Each part is copied once and its
        /// checksum taken from the copy while it is in the cache.
        func write(into out: UnsafeMutableRawBufferPointer) {
            precondition(out.count == count, "a record of \(count) bytes written into \(out.count)")
            guard let base = out.baseAddress else { return }
            var at = 0
            var crc: UInt32 = 0
            func copy(_ source: UnsafeRawBufferPointer) {
                guard let from = source.baseAddress else { return }
                // In blocks, so the checksum reads what was just written from the cache
                // rather than from memory.
                var done = 0
                while done < source.count {
                    let n = min(Self.block, source.count - done)
                    let to = base + at + done
                    to.copyMemory(from: from + done, byteCount: n)
                    crc = CRC32C.checksum(UnsafeRawBufferPointer(start: to, count: n), continuing: crc)
                    done += n
                }
                at += source.count
            }
            writer.bytes.withUnsafeBytes { small in
                var from = 0
                for part in writer.deferred {
                    copy(UnsafeRawBufferPointer(rebasing: small[from..<part.offset]))
                    part.data.withUnsafeBytes { copy($0) }
                    from = part.offset
                }
                copy(UnsafeRawBufferPointer(rebasing: small[from...]))
            }
            (base + at).storeBytes(of: crc.bigEndian, as: UInt32.self)
        }

        /// 48 KiB: two of the CRC's three-stream blocks (3 × 8 KiB), within a core's L2.
        private static let block = 49_152
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
        var rows = RowJSONBlocks.separate
        var ops: [Event.RowChanges.Op] = []
        return try decode(bytes, expectedLSN: expectedLSN, rows: &rows, ops: &ops)
    }

    /// The same decoding, the JSON of a `changed` or `localWrite` record's rows put where
    /// `rows` says: the log tools' chunks share blocks (``RowJSONBlocks/shared(blockSize:)``),
    /// so such a row's `json` may be a slice whose `startIndex` is not 0. Such a record's ops
    /// go into `ops` (an emptied array to refill, ``FoldChunk/recycledOps()``; taken, so left
    /// empty). The same errors.
    static func decode(_ bytes: UnsafeRawBufferPointer, expectedLSN: LSN?, rows: inout RowJSONBlocks, ops: inout [Event.RowChanges.Op]) throws(StoreError) -> LogRecord {
        var layout: RowChangesLayout?
        var names: CollectionNames?
        return try decode(bytes, expectedLSN: expectedLSN, rows: &rows, ops: &ops, layout: &layout, names: &names)
    }

    /// The same decoding, `layout` set to where the first op of a `changed` or `localWrite`
    /// record lies in `bytes` (``RowChangesLayout``), nil for any other record or one the
    /// one-pass decoder left to the general one (``Event/decodeRowChanges(kind:payload:rows:spare:layout:leavesOutPreparedRow:)``);
    /// the collection's name taken from `names` (``CollectionNames``) unless it is nil. With
    /// `leavesOutPreparedRow`, a change whose `layout` says it is folded from the prepared bytes
    /// alone (``RowChangesLayout/isPreparedUpsert``) gets an event of its kind with no ops
    /// (``Event/decodeRowChanges(kind:payload:rows:spare:layout:leavesOutPreparedRow:)``): only
    /// for the log tools' chunks, whose records nobody else reads. The same errors.
    static func decode(_ bytes: UnsafeRawBufferPointer, expectedLSN: LSN?, rows: inout RowJSONBlocks, ops: inout [Event.RowChanges.Op],
                       layout: inout RowChangesLayout?, names: inout CollectionNames?, leavesOutPreparedRow: Bool = false) throws(StoreError) -> LogRecord {
        layout = nil
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
        // The fixed fields (bytes 0 ..< 22) are there, the record being at least `overhead`
        // bytes: each is one load, checked in the order of the layout.
        func load<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
            T(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        let version = bytes[0]
        guard version == formatVersion else {
            throw StoreError(.unsupportedFormat, "\(at()) has format version \(version); this Freshet reads version \(formatVersion)", lsn: expectedLSN)
        }
        let kindByte = bytes[1]
        guard let kind = EventKind(rawValue: kindByte) else {
            throw StoreError(.unknownEventKind, "\(at()) has unknown event kind \(kindByte)", lsn: expectedLSN)
        }
        let flags = load(UInt16.self, at: 2)
        guard flags == 0 else {
            throw StoreError(.unsupportedFormat, "\(at()) has flags \(flags); this Freshet knows none", lsn: expectedLSN)
        }
        let lsn = LSN(load(UInt64.self, at: 4))
        if let expectedLSN, expectedLSN != lsn {
            throw StoreError(.corruptRecord, "\(at()) says it is LSN \(lsn)", lsn: expectedLSN)
        }
        let micros = Int64(bitPattern: load(UInt64.self, at: 12))
        let nameLength = Int(load(UInt16.self, at: 20))
        var r = ByteReader(bytes, from: 22, end: body.count)
        do {
            let nameBytes = try r.bytes(nameLength, "collection")
            guard let collection = names != nil ? names!.name(nameBytes) : String.validatingUTF8(nameBytes) else {
                throw StoreError(.corruptRecord, "\(at()) has a collection name that is not UTF-8", lsn: lsn)
            }
            let payloadLength = Int(try r.u32("payload length"))
            let payload = try r.reader(payloadLength, "payload")
            guard r.isAtEnd else {
                throw StoreError(.corruptRecord, "\(at()) has \(r.remaining) bytes after its payload", lsn: lsn)
            }
            // A row change (most of a log) in one pass; anything unusual, and every other
            // kind, through the general decoder.
            let event: Event
            var first = RowChangesLayout()
            if kind == .localWrite || kind == .changed, let changes = Event.decodeRowChanges(kind: kind, payload: payload, rows: &rows, spare: &ops, layout: &first,
                                                                                                         leavesOutPreparedRow: leavesOutPreparedRow) {
                event = changes
                layout = first
            } else {
                event = try Event.decode(kind: kind, payload: payload)
            }
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
