import Foundation
import Testing
@testable import Freshet

@Suite("Log record encoding")
struct LogRecordCodecTests {
    static let fullResponse = ResponseInfo(
        url: "http://127.0.0.1:8080/api/v2/pokemon/?offset=20&limit=20", status: 200,
        etag: #""9f86d081884c7d659a2feaa0c55ad015""#, lastModified: "Thu, 01 Jan 2026 00:00:00 GMT",
        cacheControl: "max-age=60, must-revalidate", date: "Thu, 01 Jan 2026 00:00:01 GMT",
        age: "12", expires: "Thu, 01 Jan 2026 00:01:00 GMT",
        durationMicros: 1_234, responseBytes: 2_048, requestBytes: 17
    )

    static let pikachu = Row(id: "25", json: Data(#"{"name":"pikachu","url":"/api/v2/pokemon/25/"}"#.utf8))
    static let raichu = Row(id: "26", json: Data(#"{"name":"raichu","url":"/api/v2/pokemon/26/"}"#.utf8))

    /// One record of every kind and shape this version writes.
    static let records: [LogRecord] = [
        LogRecord(lsn: 1, timestamp: TestClock.now, collection: "pokemon",
                  event: .fetched(.init(placement: .replace, rows: [pikachu, raichu], response: fullResponse))),
        LogRecord(lsn: 2, timestamp: TestClock.now.addingTimeInterval(0.5), collection: "pokemon",
                  event: .fetched(.init(placement: .page(index: 3, isLast: false), rows: [pikachu], response: fullResponse,
                                        nextCursor: "http://127.0.0.1:8080/api/v2/pokemon/?offset=80&limit=20"))),
        LogRecord(lsn: 3, timestamp: TestClock.now, collection: "pokemon",
                  event: .fetched(.init(placement: .page(index: 7, isLast: true), rows: [], response: ResponseInfo(url: "http://h/x", status: 200)))),
        LogRecord(lsn: 4, timestamp: TestClock.now, collection: "pokemon-detail",
                  event: .fetched(.init(placement: .upsert, rows: [pikachu], response: fullResponse))),
        LogRecord(lsn: 5, timestamp: TestClock.now, collection: "pokemon",
                  event: .notModified(.init(response: ResponseInfo(url: "http://h/x", status: 304, etag: #"W/"v1""#, durationMicros: -5)))),
        LogRecord(lsn: 5, timestamp: TestClock.now, collection: "pokemon",
                  event: .notModified(.init(response: fullResponse, page: 4, basisLSN: 4))),
        LogRecord(lsn: 5, timestamp: TestClock.now, collection: "pokemon",
                  event: .fetched(.init(placement: .page(index: 0, isLast: false), rows: [], response: fullResponse,
                                        nextCursor: "http://h/p1", basisLSN: 4, rowsWithheld: true))),
        LogRecord(lsn: 5, timestamp: TestClock.now, collection: "pokemon",
                  event: .fetched(.init(placement: .replace, rows: [raichu], response: fullResponse, basisLSN: .zero))),
        LogRecord(lsn: 6, timestamp: TestClock.now, collection: "pokemon",
                  event: .fetchFailed(.init(url: "http://h/x", reason: "httpStatus", status: 503, message: "GET http://h/x answered 503",
                                            attempt: 3, durationMicros: 42))),
        LogRecord(lsn: 7, timestamp: TestClock.now, collection: "pokemon",
                  event: .fetchFailed(.init(url: "http://h/x", reason: "cannotConnect", message: "offline"))),
        LogRecord(lsn: 8, timestamp: TestClock.now, collection: "pokemon",
                  event: .changed(.init([.upsert(pikachu), .delete(id: "26")]))),
        LogRecord(lsn: 8, timestamp: TestClock.now, collection: "pokemon",
                  event: .changed(.init([.upsert(pikachu)], origin: PushOrigin(source: "pokemon-sse", eventID: "42")))),
        LogRecord(lsn: 8, timestamp: TestClock.now, collection: "pokemon",
                  event: .changed(.init([.delete(id: "25")], origin: PushOrigin(source: "ws", eventID: "opaque-ä")))),
        LogRecord(lsn: 9, timestamp: TestClock.now, collection: "favourites",
                  event: .localWrite(.init([.upsert(pikachu), .upsert(raichu), .delete(id: "25"), .delete(id: "never-there")]))),
        LogRecord(lsn: 10, timestamp: TestClock.now, collection: "pokemon", event: .invalidated(.init(reason: "pulled to refresh"))),
        LogRecord(lsn: 11, timestamp: TestClock.now, collection: "pokemon", event: .invalidated(.init())),
        LogRecord(lsn: LSN(UInt64.max), timestamp: Date(timeIntervalSince1970: -1.5), collection: "ポケモン",
                  event: .localWrite(.init([]))),
    ]

    static var sample: LogRecord { records[0] }

    @Test("every record kind decodes to the record that was encoded", arguments: records)
    func roundTrip(record: LogRecord) throws {
        let decoded = try LogRecord.decode(record.encoded(), expectedLSN: record.lsn)
        #expect(decoded == record)
        #expect(decoded.kind == record.kind)
    }

    @Test("the envelope holds version, kind, flags, LSN, time, collection, payload and CRC at fixed offsets")
    func envelopeLayout() {
        let record = LogRecord(lsn: 0x0102_0304_0506_0708, timestamp: Date(timeIntervalSince1970: 1), collection: "ab",
                               event: .invalidated(.init()))
        let bytes = record.encoded()
        #expect(bytes.count == 30 + 2 + 0)
        #expect(Array(bytes[0..<4]) == [1, EventKind.invalidated.rawValue, 0, 0])
        #expect(Array(bytes[4..<12]) == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(Array(bytes[12..<20]) == [0, 0, 0, 0, 0, 0x0F, 0x42, 0x40]) // 1_000_000 µs
        #expect(Array(bytes[20..<24]) == [0, 2, UInt8(ascii: "a"), UInt8(ascii: "b")])
        #expect(Array(bytes[24..<28]) == [0, 0, 0, 0])
        let crc = CRC32C.checksum(bytes[0..<28])
        #expect(Array(bytes[28..<32]) == [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)])
    }

    @Test("CRC-32C matches the published check values", arguments: [
        (Array("123456789".utf8), UInt32(0xE306_9283)),
        ([UInt8](), UInt32(0)),
        ([UInt8](repeating: 0, count: 32), UInt32(0x8A91_36AA)),
        ([UInt8](repeating: 0xFF, count: 32), UInt32(0x62A8_AB43)),
        (Array(UInt8(0)...UInt8(31)), UInt32(0x46DD_794E)),
        (Array((UInt8(0)...UInt8(31)).reversed()), UInt32(0x113F_DB5C)),
    ])
    func crc32cCheckValues(input: [UInt8], expected: UInt32) {
        #expect(CRC32C.checksum(input) == expected)
    }

    @Test("a flipped byte anywhere in a record fails with checksumMismatch")
    func flippedByte() throws {
        let bytes = Self.records[1].encoded()
        for offset in bytes.indices {
            var damaged = bytes
            damaged[offset] ^= 0xFF
            let error = #expect(throws: StoreError.self, "byte \(offset)") { try LogRecord.decode(damaged) }
            #expect(error?.code == .checksumMismatch, "byte \(offset): \(String(describing: error))")
        }
    }

    @Test("a truncated record fails with a StoreError at every length")
    func truncated() throws {
        let bytes = Self.records[0].encoded()
        for length in 0..<bytes.count {
            let error = #expect(throws: StoreError.self, "length \(length)") { try LogRecord.decode(Array(bytes.prefix(length))) }
            let expected: StoreError.Code = length < LogRecord.overhead ? .corruptRecord : .checksumMismatch
            #expect(error?.code == expected, "length \(length): \(String(describing: error))")
        }
    }

    @Test("a truncated record with a recomputed CRC fails with corruptRecord at every length")
    func truncatedWithValidChecksum() throws {
        let bytes = Self.records[0].encoded()
        let body = Array(bytes.dropLast(4))
        for length in 0..<body.count {
            let damaged = Self.sealed(Array(body.prefix(length)))
            let error = #expect(throws: StoreError.self, "length \(length)") { try LogRecord.decode(damaged) }
            #expect(error?.code == .corruptRecord, "length \(length): \(String(describing: error))")
        }
    }

    @Test("an unknown kind byte with a valid CRC fails with unknownEventKind",
          arguments: [UInt8(0), 100, 200, 255])
    func unknownKind(kind: UInt8) throws {
        var body = Array(Self.sample.encoded().dropLast(4))
        body[1] = kind
        let error = #expect(throws: StoreError.self) { try LogRecord.decode(Self.sealed(body)) }
        #expect(error?.code == .unknownEventKind)
    }

    @Test("an unknown format version or non-zero flags fail with unsupportedFormat",
          arguments: [(0, UInt8(0)), (0, 2), (0, 255), (2, 1), (3, 0x80)])
    func unsupportedFormat(offset: Int, value: UInt8) throws {
        var body = Array(Self.sample.encoded().dropLast(4))
        body[offset] = value
        let error = #expect(throws: StoreError.self) { try LogRecord.decode(Self.sealed(body)) }
        #expect(error?.code == .unsupportedFormat)
    }

    @Test("a record stored under another LSN than its own is corrupt")
    func wrongLSN() throws {
        let error = #expect(throws: StoreError.self) { try LogRecord.decode(Self.sample.encoded(), expectedLSN: 2) }
        #expect(error?.code == .corruptRecord)
        #expect(error?.lsn == 2)
    }

    @Test("bytes after the payload make a record corrupt")
    func trailingBytes() throws {
        let body = Array(Self.sample.encoded().dropLast(4)) + [0]
        let error = #expect(throws: StoreError.self) { try LogRecord.decode(Self.sealed(body)) }
        #expect(error?.code == .corruptRecord)
    }

    @Test("any damaged byte with a recomputed CRC decodes or throws a StoreError, never crashes", arguments: records)
    func damagedPayloadNeverCrashes(record: LogRecord) {
        let body = Array(record.encoded().dropLast(4))
        for offset in body.indices {
            for value: UInt8 in [0x00, 0x01, 0x7F, 0x80, 0xFF] where body[offset] != value {
                var damaged = body
                damaged[offset] = value
                do {
                    _ = try LogRecord.decode(Self.sealed(damaged))
                } catch {
                    // Typed throws: whatever is thrown is a StoreError; it must carry a message.
                    #expect(!error.message.isEmpty)
                }
            }
        }
    }

    /// `body` followed by its CRC-32C, big-endian: a record whose checksum is valid.
    static func sealed(_ body: [UInt8]) -> [UInt8] {
        let crc = CRC32C.checksum(body)
        return body + [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
    }
}
