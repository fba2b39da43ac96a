import Foundation
import Testing
@testable import Freshet

/// `ByteReader` borrows the bytes it reads (issue 8's speed round 4): fixed-width integers are
/// loaded in one go and one-byte varints skip the loop, with the same values and the same
/// errors as before; a record decoded in place is the record the array form gives.
@Suite("ByteReader and in-place decoding")
struct ByteReaderTests {
    @Test("fixed-width integers are big-endian, varints of one and two bytes read, a short field names what it lacked")
    func fieldsAndErrors() throws {
        let bytes: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0xF0, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x7F, 0xAC, 0x02, 0x09, 0x0A]
        try bytes.withUnsafeBytes { raw throws in
            var r = ByteReader(raw)
            #expect(try r.u16("a") == 0x0102)
            #expect(try r.u32("b") == 0x0304_0506)
            #expect(try r.u64("c") == 0xF001_0203_0405_0607)
            #expect(try r.varint() == 127)
            #expect(try r.varint() == 300)
            #expect(r.remaining == 2)
            let error = #expect(throws: FormatError.self) { try r.u32("payload length") }
            #expect(error?.reason == "truncated payload length: needs 4 bytes, 2 left")
            #expect(try r.u16("d") == 0x090A)
            #expect(r.isAtEnd)
        }
        try [UInt8]([0x80]).withUnsafeBytes { raw throws in
            var r = ByteReader(raw)
            let error = #expect(throws: FormatError.self) { try r.varint("field length") }
            #expect(error?.reason == "truncated field length: needs 1 bytes, 0 left")
        }
    }

    @Test("a record decoded in place from borrowed bytes equals the array form's", arguments: LogRecordCodecTests.records)
    func inPlace(record: LogRecord) throws {
        let bytes = record.encoded()
        let decoded = try bytes.withUnsafeBytes { try LogRecord.decode($0, expectedLSN: record.lsn) }
        #expect(decoded == record)
        #expect(try LogRecord.decode(bytes, expectedLSN: record.lsn) == record)
    }

    @Test("in place and from an array, a damaged record fails with the same message")
    func sameErrors() throws {
        var damaged = LogRecordCodecTests.records[0].encoded()
        damaged[30] ^= 0x01
        let fromArray = #expect(throws: StoreError.self) { try LogRecord.decode(damaged, expectedLSN: 1) }
        let inPlace = #expect(throws: StoreError.self) { try damaged.withUnsafeBytes { try LogRecord.decode($0, expectedLSN: 1) } }
        #expect(fromArray?.code == .checksumMismatch)
        #expect(fromArray?.message.hasPrefix("record at LSN 1 fails its CRC-32C: stored 0x") == true)
        #expect(inPlace?.message == fromArray?.message)
    }

    @Test("an emptied chunk keeps its records' capacity and holds nothing")
    func chunkRemoveAll() throws {
        let proposal = LogRecord(lsn: 2, timestamp: TestClock.now, collection: "pokemon",
                                 event: .mutationProposed(.init(id: DumpJSONLineTests.mutationID, mutation: DumpJSONLineTests.mutation)))
        var chunk = FoldChunk(capacity: 64)
        for record in [LogRecordCodecTests.records[0], proposal] {
            record.encoded().withUnsafeBytes { chunk.append(record, bytes: $0) }
        }
        chunk.problems.append(StoreProblem(database: "log", lsn: 3, message: "missing"))
        #expect(chunk.count == 2)
        #expect(chunk.proposals == [proposal.encoded()])
        let capacity = chunk.records.capacity
        chunk.removeAll()
        #expect(chunk.count == 0)
        #expect(chunk.proposals.isEmpty)
        #expect(chunk.problems.isEmpty)
        #expect(chunk.records.capacity == capacity)
    }
}
