import Foundation
import Testing
@testable import Freshet

/// Issue 8's speed round 5: a row change decoded in one pass (`Event.decodeRowChanges`), its
/// rows' JSON as slices of shared blocks (`RowJSONBlocks`) and its ops array refilled from a
/// folded chunk (`FoldChunk.recycledOps`) give the events the general decoder gives; the one
/// pass leaves every payload it does not take as it is to the general decoder and its errors.
@Suite("Row changes decoded in one pass, rows in shared blocks")
struct RowChangesDecodingTests {
    static let pikachu = LogRecordCodecTests.pikachu
    static let raichu = LogRecordCodecTests.raichu

    /// A payload written field by field.
    static func payload(_ body: (inout ByteWriter) -> Void) -> [UInt8] {
        var w = ByteWriter()
        body(&w)
        return w.bytes
    }

    /// Payloads the one pass takes: standard encodings, and the liberties the general decoder
    /// allows (unknown tags, repeated fields, a padded varint, bytes after an op's kind).
    static let accepted: [(name: String, bytes: [UInt8])] = [
        ("one upsert", LogRecord(lsn: 1, timestamp: TestClock.now, collection: "c", event: .localWrite(.init([.upsert(pikachu)]))).event.encodedPayload()),
        ("upsert, delete and an origin", Event.changed(.init([.upsert(pikachu), .delete(id: "26")], origin: PushOrigin(source: "sse", eventID: "7"))).encodedPayload()),
        ("no ops", []),
        ("unknown tags outside and inside an op", payload { w in
            w.field(7, uint: 99)
            w.field(1) { m in
                m.field(9, string: "ignored")
                m.field(1, uint: 1)
                m.field(2, string: "25")
                m.field(3, data: pikachu.json)
            }
        }),
        ("a repeated ID and JSON: the last ones", payload { w in
            w.field(1) { m in
                m.field(2, string: "1")
                m.field(3, data: raichu.json)
                m.field(1, uint: 1)
                m.field(2, string: "25")
                m.field(3, data: pikachu.json)
            }
        }),
        ("an upsert without JSON, a delete with JSON", payload { w in
            w.field(1) { m in
                m.field(1, uint: 1)
                m.field(2, string: "1")
            }
            w.field(1) { m in
                m.field(1, uint: 2)
                m.field(2, string: "2")
                m.field(3, data: pikachu.json)
            }
        }),
        ("a delete with JSON first, its kind repeated: the last one", payload { w in
            w.field(1) { m in
                m.field(1, uint: 1)
                m.field(2, string: "1")
                m.field(3, data: pikachu.json)
                m.field(1, uint: 2)
            }
            w.field(1) { m in
                m.field(1, uint: 1)
                m.field(2, string: "2")
                m.field(3, data: raichu.json)
            }
        }),
        // Tag 1, length 7 written in two bytes (0x87 0x00); the op's kind followed by a byte.
        ("a padded length, a byte after the op's kind", [0x01, 0x87, 0x00, 0x01, 0x02, 0x01, 0xFF, 0x02, 0x01, 0x61]),
    ]

    @Test("the one pass gives what the general decoder gives", arguments: accepted.map(\.name))
    func sameEvent(name: String) throws {
        let bytes = try #require(Self.accepted.first { $0.name == name }).bytes
        for kind in [EventKind.localWrite, .changed] {
            let general = try bytes.withUnsafeBytes { try Event.decode(kind: kind, payload: ByteReader($0)) }
            for blockSize in [nil, 16, 65_536] {
                var rows = blockSize.map { RowJSONBlocks.shared(blockSize: $0) } ?? .separate
                var spare: [Event.RowChanges.Op] = [.delete(id: "left over"), .delete(id: "and another"), .delete(id: "and a third")]
                var layout = RowChangesLayout()
                let fast = bytes.withUnsafeBytes { Event.decodeRowChanges(kind: kind, payload: ByteReader($0), rows: &rows, spare: &spare, layout: &layout) }
                #expect(fast == general, "\(name), \(kind), blocks of \(blockSize ?? 0)")
                #expect(spare.isEmpty)
                Self.expectLayout(layout, of: general, in: bytes, name)
            }
        }
    }

    /// Which of ``accepted`` the log tools fold from prepared bytes alone (one upserted row, no origin).
    static let preparedNames: Set<String> = ["one upsert", "unknown tags outside and inside an op", "a repeated ID and JSON: the last ones",
                                             "a padded length, a byte after the op's kind"]

    @Test("leaving out a prepared upsert's row: the same layout, an event of the same kind with no ops, the spare kept; any other change as before",
          arguments: accepted.map(\.name))
    func leftOutRow(name: String) throws {
        let bytes = try #require(Self.accepted.first { $0.name == name }).bytes
        for kind in [EventKind.localWrite, .changed] {
            let general = try bytes.withUnsafeBytes { try Event.decode(kind: kind, payload: ByteReader($0)) }
            var rows = RowJSONBlocks.shared(blockSize: 256)
            let left: [Event.RowChanges.Op] = [.delete(id: "left over"), .delete(id: "and another")]
            var spare = left
            var layout = RowChangesLayout()
            let fast = try #require(bytes.withUnsafeBytes {
                Event.decodeRowChanges(kind: kind, payload: ByteReader($0), rows: &rows, spare: &spare, layout: &layout, leavesOutPreparedRow: true)
            })
            Self.expectLayout(layout, of: general, in: bytes, name)
            #expect(layout.isPreparedUpsert == Self.preparedNames.contains(name), "\(name)")
            if layout.isPreparedUpsert {
                #expect(fast == (kind == .changed ? .changed(.init([])) : .localWrite(.init([]))), "\(name), \(kind)")
                #expect(spare == left, "\(name)")
            } else {
                #expect(fast == general, "\(name), \(kind)")
                #expect(spare.isEmpty, "\(name)")
            }
        }
    }

    @Test("a prepared upsert's row is left out only up to the size limit; a second op, an origin or a delete keep it")
    func leftOutLimits() throws {
        func decoded(_ event: Event) throws -> (Event?, RowChangesLayout) {
            let bytes = event.encodedPayload()
            var rows = RowJSONBlocks.shared()
            var spare: [Event.RowChanges.Op] = []
            var layout = RowChangesLayout()
            let fast = bytes.withUnsafeBytes {
                Event.decodeRowChanges(kind: event.kind, payload: ByteReader($0), rows: &rows, spare: &spare, layout: &layout, leavesOutPreparedRow: true)
            }
            return (fast, layout)
        }
        let atLimit = Row(id: "1", json: Data(repeating: 0x61, count: FoldChunk.preparedRowLimit))
        let overLimit = Row(id: "1", json: Data(repeating: 0x61, count: FoldChunk.preparedRowLimit + 1))
        let (small, smallLayout) = try decoded(.localWrite(.init([.upsert(atLimit)])))
        #expect(small == .localWrite(.init([])))
        #expect(smallLayout.isPreparedUpsert && smallLayout.jsonCount == FoldChunk.preparedRowLimit)
        for kept in [Event.localWrite(.init([.upsert(overLimit)])), .localWrite(.init([.upsert(Self.pikachu), .delete(id: "26")])),
                     .localWrite(.init([.delete(id: "26")])), .changed(.init([.upsert(Self.pikachu)], origin: PushOrigin(source: "sse", eventID: "7")))] {
            let (event, layout) = try decoded(kept)
            #expect(event == kept)
            #expect(!layout.isPreparedUpsert)
        }
    }

    /// `layout` says where the first op of `event` (a row change decoded from `bytes`) lies.
    static func expectLayout(_ layout: RowChangesLayout, of event: Event, in bytes: [UInt8], _ name: String) {
        guard case .localWrite(let changes) = event else {
            guard case .changed(let changes) = event else { Issue.record("\(name): not a row change"); return }
            return expectLayout(layout, of: .localWrite(changes), in: bytes, name)
        }
        #expect(layout.opCount == changes.ops.count, "\(name)")
        #expect(layout.hasOrigin == (changes.origin != nil), "\(name)")
        let id = Array(bytes[layout.idStart..<(layout.idStart + layout.idCount)])
        let json = Array(bytes[layout.jsonStart..<(layout.jsonStart + layout.jsonCount)])
        switch changes.ops.first {
        case .upsert(let row):
            #expect(layout.firstIsUpsert, "\(name)")
            #expect(id == Array(row.id.utf8), "\(name)")
            #expect(json == Array(row.json), "\(name)")
        case .delete(let deleted):
            #expect(!layout.firstIsUpsert, "\(name)")
            #expect(id == Array(deleted.utf8), "\(name)")
            #expect(json.isEmpty, "\(name)")
        case nil:
            #expect(layout.opCount == 0 && layout.idCount == 0 && layout.jsonCount == 0 && !layout.firstIsUpsert, "\(name)")
        }
    }

    /// Payloads the one pass leaves to the general decoder, with the general decoder's reason.
    static let refused: [(bytes: [UInt8], reason: String)] = [
        ([0x01, 0x09, 0x00, 0x00], "field 1 claims 9 bytes, 2 left"),
        ([0x80], "truncated field tag: needs 1 bytes, 0 left"),
        ([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02], "field tag overflows 64 bits"),
        ([0x01, 0x03, 0x01, 0x01, 0x01], "row op has no id"),
        ([0x01, 0x06, 0x01, 0x01, 0x03, 0x02, 0x01, 0x61], "unknown row op 3"),
        ([0x01, 0x06, 0x01, 0x01, 0x01, 0x02, 0x01, 0xFF], "field 2 is not valid UTF-8"),
        ([0x01, 0x05, 0x01, 0x00, 0x02, 0x01, 0x61], "truncated field 1: needs 1 bytes, 0 left"),
        ([0x02, 0x03, 0x01, 0x01, 0x61], "push origin lacks its source or event ID"),
    ]

    @Test("a payload the one pass does not take is left to the general decoder and its error", arguments: refused.map(\.reason))
    func refusedPayloads(reason: String) throws {
        let bytes = try #require(Self.refused.first { $0.reason == reason }).bytes
        var rows = RowJSONBlocks.shared()
        var spare: [Event.RowChanges.Op] = []
        var layout = RowChangesLayout()
        #expect(bytes.withUnsafeBytes { Event.decodeRowChanges(kind: .localWrite, payload: ByteReader($0), rows: &rows, spare: &spare, layout: &layout) } == nil)
        #expect(bytes.withUnsafeBytes {
            Event.decodeRowChanges(kind: .localWrite, payload: ByteReader($0), rows: &rows, spare: &spare, layout: &layout, leavesOutPreparedRow: true)
        } == nil)
        let error = #expect(throws: FormatError.self) { try bytes.withUnsafeBytes { try Event.decode(kind: .localWrite, payload: ByteReader($0)) } }
        #expect(error?.reason == reason)
        // Through the record decoder, as the log tools meet it: the same message either way.
        let record = Self.record(kind: .localWrite, lsn: 5, payload: bytes)
        let inChunk = #expect(throws: StoreError.self) {
            try record.withUnsafeBytes { raw in
                var ops: [Event.RowChanges.Op] = []
                _ = try LogRecord.decode(raw, expectedLSN: 5, rows: &rows, ops: &ops)
            }
        }
        #expect(inChunk?.code == .corruptRecord)
        #expect(inChunk?.message == "record at LSN 5: \(reason)")
        let fromArray = #expect(throws: StoreError.self) { try LogRecord.decode(record, expectedLSN: 5) }
        #expect(fromArray?.message == inChunk?.message)
    }

    /// A version-1 record of `kind` around `payload`, in collection `c`, with its checksum.
    static func record(kind: EventKind, lsn: UInt64, payload: [UInt8]) -> [UInt8] {
        var w = ByteWriter()
        w.u8(LogRecord.formatVersion)
        w.u8(kind.rawValue)
        w.u16(0)
        w.u64(lsn)
        w.i64(0)
        w.u16(1)
        w.u8(0x63)
        w.u32(UInt32(payload.count))
        w.raw(payload)
        w.u32(CRC32C.checksum(w.bytes))
        return w.bytes
    }

    @Test("every codec record decodes with shared blocks and refilled ops to the record encoded", arguments: LogRecordCodecTests.records)
    func codecRecords(record: LogRecord) throws {
        let bytes = record.encoded()
        // Blocks of 64 bytes: pikachu's JSON (46 bytes) is over a quarter of one and gets a
        // `Data` of its own; of 256, two rows share a block.
        for blockSize in [64, 256] {
            var rows = RowJSONBlocks.shared(blockSize: blockSize)
            var ops: [Event.RowChanges.Op] = [.upsert(Self.raichu)]
            let decoded = try bytes.withUnsafeBytes { try LogRecord.decode($0, expectedLSN: record.lsn, rows: &rows, ops: &ops) }
            #expect(decoded == record, "blocks of \(blockSize)")
        }
    }

    @Test("shared blocks hand out slices in order, start a block when one is full, give a large row and an empty one a Data of their own")
    func sharedBlocks() {
        let six = Data("abcdef".utf8)
        var slices: [Data] = []
        do {
            var blocks = RowJSONBlocks.shared(blockSize: 32)
            six.withUnsafeBytes { bytes in
                for _ in 0..<6 { slices.append(blocks.data(bytes)) }
            }
            Data("123456789".utf8).withUnsafeBytes { slices.append(blocks.data($0)) }
            Data().withUnsafeBytes { slices.append(blocks.data($0)) }
        }
        // The blocks value is gone; the slices keep their blocks.
        #expect(slices.map(\.startIndex) == [0, 6, 12, 18, 24, 0, 0, 0])
        #expect(slices.map(\.count) == [6, 6, 6, 6, 6, 6, 9, 0])
        #expect(Array(slices[0..<6]) == Array(repeating: six, count: 6))
        #expect(slices[6] == Data("123456789".utf8))
        #expect(slices[4].withUnsafeBytes { Array($0) } == Array("abcdef".utf8))
        var separate = RowJSONBlocks.separate
        let own = six.withUnsafeBytes { separate.data($0) }
        #expect(own.startIndex == 0)
        #expect(own == six)
    }

    @Test("an emptied chunk hands out its folded row changes' ops arrays in order, other records and left-out rows skipped, then nothing")
    func recycledOps() throws {
        let write = LogRecord(lsn: 1, timestamp: TestClock.now, collection: "favourites", event: .localWrite(.init([.upsert(Self.pikachu), .delete(id: "26")])))
        let invalidated = LogRecord(lsn: 2, timestamp: TestClock.now, collection: "favourites", event: .invalidated(.init(reason: "pulled")))
        let pushed = LogRecord(lsn: 3, timestamp: TestClock.now, collection: "pokemon", event: .changed(.init([.upsert(Self.raichu)], origin: PushOrigin(source: "sse", eventID: "1"))))
        var chunk = FoldChunk(capacity: 8)
        for record in [write, invalidated, pushed] {
            record.encoded().withUnsafeBytes { chunk.append(record, bytes: $0) }
        }
        // A one-row upsert decoded with its row left out: appended from its layout, it holds no ops.
        let prepared = LogRecord(lsn: 4, timestamp: TestClock.now, collection: "favourites", event: .localWrite(.init([.upsert(Self.raichu)])))
        try prepared.encoded().withUnsafeBytes { raw in
            var rows = RowJSONBlocks.shared()
            var ops: [Event.RowChanges.Op] = []
            var layout: RowChangesLayout?
            var names: CollectionNames? = CollectionNames()
            let decoded = try LogRecord.decode(raw, expectedLSN: 4, rows: &rows, ops: &ops, layout: &layout, names: &names, leavesOutPreparedRow: true)
            #expect(decoded.event == .localWrite(.init([])))
            #expect(layout?.isPreparedUpsert == true)
            chunk.append(decoded, bytes: raw, layout: layout)
        }
        #expect(chunk.recycledOps() == [])
        chunk.removeAll()
        #expect(chunk.count == 0)
        let first = chunk.recycledOps()
        #expect(first == [.upsert(Self.pikachu), .delete(id: "26")])
        #expect(chunk.recycledOps() == [.upsert(Self.raichu)])
        #expect(chunk.recycledOps() == [])
        #expect(chunk.recycledOps() == [])
        // Emptied again, the records refilled since are the ones handed out.
        chunk.append(invalidated, bytes: UnsafeRawBufferPointer(start: nil, count: 0))
        chunk.removeAll()
        #expect(chunk.recycledOps() == [])
        #expect(chunk.recycledOps() == [])
    }
}
