import Foundation
import Testing
@testable import Freshet

/// `LogRecord.checkedParts()`: the record the store's writer puts straight into LMDB's page
/// (docs/performance.md, round 9) is byte for byte the record `checkedEncoding()` gives.
@Suite("Log record parts written in place")
struct LogRecordPartsTests {
    /// The bytes `parts` writes into a buffer of exactly its size.
    func written(_ parts: LogRecord.EncodedParts) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: parts.count) { buffer, initialized in
            parts.write(into: UnsafeMutableRawBufferPointer(buffer))
            initialized = parts.count
        }
    }

    /// A row whose JSON is `size` bytes: `{"id":"ID","p":"xxx…"}`.
    static func row(_ id: String, size: Int) -> Row {
        let head = #"{"id":"\#(id)","p":""#
        let padding = String(repeating: "x", count: max(0, size - head.utf8.count - 2))
        return Row(id: id, json: Data((head + padding + #""}"#).utf8))
    }

    static let response = LogRecordCodecTests.fullResponse

    /// Rows around the size from which their JSON is deferred (4,096 bytes) and well above it,
    /// one and several to a record, mixed with small ones, first, last and between.
    static let fetched: [LogRecord] = {
        let sizes = [ByteWriter.deferredMinimum - 1, ByteWriter.deferredMinimum, ByteWriter.deferredMinimum + 1, 200_000, 1_000_003]
        var records: [LogRecord] = sizes.enumerated().map { n, size in
            LogRecord(lsn: LSN(UInt64(n + 1)), timestamp: TestClock.now, collection: "details",
                      event: .fetched(.init(placement: .upsert, rows: [row("d\(n)", size: size)], response: response)))
        }
        let mixed = [row("a", size: 20), row("b", size: 70_000), row("c", size: 30), row("d", size: 5_000), row("e", size: 9_999)]
        records.append(LogRecord(lsn: 20, timestamp: TestClock.now, collection: "pokemon",
                                 event: .fetched(.init(placement: .page(index: 2, isLast: true), rows: mixed, response: response,
                                                       nextCursor: "http://h/p3", basisLSN: 7, rowsWithheld: false))))
        records.append(LogRecord(lsn: 21, timestamp: TestClock.now, collection: "pokemon",
                                 event: .fetched(.init(placement: .replace, rows: [row("z", size: 8_192), row("y", size: 8)], response: response))))
        // Rows at the varint boundaries, all small (written in one pass) and with large ones.
        for (n, rows) in [boundaryRows.filter { $0.json.count < ByteWriter.deferredMinimum }, boundaryRows].enumerated() {
            records.append(LogRecord(lsn: LSN(UInt64(30 + n)), timestamp: TestClock.now, collection: "pokemon",
                                     event: .fetched(.init(placement: .page(index: 0, isLast: false), rows: rows, response: response))))
        }
        return records
    }()

    @Test("a record written from its parts is the record checkedEncoding gives, for every kind and row size",
          arguments: LogRecordCodecTests.records + fetched)
    func partsMatchTheEncoding(record: LogRecord) throws {
        let parts = try record.checkedParts()
        let expected = try record.checkedEncoding()
        #expect(parts.count == expected.count)
        #expect(written(parts) == expected)
        #expect(try LogRecord.decode(written(parts), expectedLSN: record.lsn) == record)
    }

    /// Rows whose IDs and JSON sit on either side of the lengths where a length's varint
    /// gains a byte (127/128, 16,383/16,384), the row message's own length among them; one
    /// JSON a slice of a larger buffer (indexed from 5, as a fetched row's may be).
    static let boundaryRows: [Row] = {
        let sizes = [1, 2, 121, 122, 123, 126, 127, 128, 129, 16_370, 16_376, 16_377, 16_383, 16_384, 16_385]
        var rows = sizes.enumerated().map { n, size in
            Row(id: String(repeating: "i", count: [1, 127, 128][n % 3]), json: Data(repeating: UInt8(ascii: "7"), count: size))
        }
        let buffer = Data("xxxxx[1,2]yyy".utf8)
        rows.append(Row(id: "slice", json: buffer[5..<10]))
        return rows
    }()

    @Test("a page's rows written in one pass are byte for byte the fields written row by row, deferring or not")
    func rowsInOnePass() {
        var each = ByteWriter()
        for row in Self.boundaryRows { each.field(4) { $0.encode(row) } }
        var one = ByteWriter()
        one.fields(4, rows: Self.boundaryRows)
        #expect(one.bytes == each.bytes)
        // Every JSON is below 4,096 bytes but the 16 KiB ones: with deferral on, the one pass
        // is left for row-by-row fields, the large JSON deferred.
        let small = Self.boundaryRows.filter { $0.json.count < ByteWriter.deferredMinimum }
        var expected = ByteWriter()
        for row in small { expected.field(4) { $0.encode(row) } }
        var deferring = ByteWriter(defersLargeData: true)
        deferring.fields(4, rows: small)
        #expect(deferring.bytes == expected.bytes)
        #expect(deferring.deferred.isEmpty)
        var mixed = ByteWriter(defersLargeData: true)
        mixed.fields(4, rows: Self.boundaryRows)
        #expect(mixed.count == each.count)
        #expect(mixed.deferred.map(\.data.count) == [16_370, 16_376, 16_377, 16_383, 16_384, 16_385])
    }

    /// `rows`' JSON laid end to end in one buffer after 7 bytes, as a body holds its rows,
    /// given as a slice from index 7.
    static func slices(of rows: [Row]) -> RowSlices {
        var storage = Data("body = ".utf8)
        var ranges: [Range<Int>] = []
        for row in rows {
            ranges.append((storage.count - 7)..<(storage.count - 7 + row.json.count))
            storage.append(row.json)
            storage.append(UInt8(ascii: ","))
        }
        return RowSlices(storage: storage[7...], ranges: ranges)
    }

    @Test("rows written from their slices of one buffer are byte for byte the rows written from their own JSON, deferring or not")
    func rowsFromSlices() {
        let small = Self.boundaryRows.filter { $0.json.count < ByteWriter.deferredMinimum }
        for rows in [Self.boundaryRows, small] {
            for defers in [false, true] {
                var own = ByteWriter(defersLargeData: defers)
                own.fields(4, rows: rows)
                var sliced = ByteWriter(defersLargeData: defers)
                sliced.fields(4, rows: rows, slices: Self.slices(of: rows))
                #expect(sliced.bytes == own.bytes)
                #expect(sliced.count == own.count)
                #expect(sliced.deferred.map(\.data) == own.deferred.map(\.data))
            }
        }
    }

    @Test("a page's encoded rows and keys built from slices are the ones built from each row's JSON")
    func encodedRowsFromSlices() {
        let rows = Self.boundaryRows
        let prefix = Keys.collection("pokemon")
        func contents(_ e: EncodedRows) -> [[UInt8]] {
            e.withBuffers { b in (0..<e.count).flatMap { [Array(b.row($0)), Array(b.rowKey($0)), Array(b.indexKey($0)), Array(b.value($0))] } }
        }
        let own = EncodedRows(rows, page: 3, prefix: prefix)
        let sliced = EncodedRows(rows, page: 3, prefix: prefix, slices: Self.slices(of: rows))
        #expect(sliced.count == rows.count)
        #expect(sliced.positions == own.positions)
        #expect(contents(sliced) == contents(own))
        #expect(contents(sliced).count == 4 * rows.count)
    }

    @Test("rows' JSON of 4,096 bytes or more is left out of the writer's buffer; smaller JSON is in it")
    func largeJSONIsDeferred() throws {
        var w = ByteWriter(defersLargeData: true)
        w.u8(7)
        w.raw(Data(repeating: 0x61, count: ByteWriter.deferredMinimum - 1))
        w.raw(Data(repeating: 0x62, count: ByteWriter.deferredMinimum))
        w.u8(9)
        #expect(w.bytes.count == 1 + ByteWriter.deferredMinimum - 1 + 1)
        #expect(w.count == 1 + 2 * ByteWriter.deferredMinimum - 1 + 1)
        #expect(w.deferred.map(\.offset) == [ByteWriter.deferredMinimum])
        #expect(w.deferred.map(\.data.count) == [ByteWriter.deferredMinimum])
        // Without the option nothing is deferred.
        var plain = ByteWriter()
        plain.raw(Data(repeating: 0x62, count: 100_000))
        #expect(plain.deferred.isEmpty)
        #expect(plain.bytes.count == 100_000)
    }

    @Test("a record too large for its length field fails from checkedParts as from checkedEncoding")
    func tooLongCollectionName() {
        let record = LogRecord(lsn: 1, timestamp: TestClock.now, collection: String(repeating: "c", count: Int(UInt16.max) + 1),
                               event: .fetched(.init(placement: .upsert, rows: [Self.row("1", size: 10_000)], response: Self.response)))
        let error = #expect(throws: StoreError.self) { try record.checkedParts() }
        #expect(error?.code == .invalidEvent)
        #expect(error?.message == "collection name of 65536 bytes does not fit a log record (at most 65535)")
        #expect(throws: StoreError.self) { try record.checkedEncoding() }
    }
}
