import Foundation
import Testing
@testable import Freshet

@Suite("dump --json lines written by JSONWriter")
struct DumpJSONLineTests {
    static let mutationID = MutationID(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)))
    static let mutation = Mutation(name: "rename \"pikachu\"\n", ops: [.init(collection: "favourites", change: .upsert(LogRecordCodecTests.pikachu)),
                                                                    .init(collection: "favourites", change: .delete(id: "26"))],
                                   request: .init(method: .patch, path: "/api/v2/pokemon/25/"), invalidates: ["pokemon", "pokemon-detail"])

    static let records: [LogRecord] = LogRecordCodecTests.records + [
        LogRecord(lsn: 20, timestamp: TestClock.now, collection: "favourites",
                  event: .mutationProposed(.init(id: mutationID, mutation: mutation))),
        LogRecord(lsn: 21, timestamp: TestClock.now, collection: "favourites",
                  event: .mutationConfirmed(.init(id: mutationID, status: 201, rows: [("favourites", LogRecordCodecTests.raichu)],
                                                  idMappings: [.init(collection: "favourites", provisionalID: "local-1", serverID: "99")],
                                                  invalidates: ["pokemon"]))),
        LogRecord(lsn: 22, timestamp: TestClock.now, collection: "favourites",
                  event: .mutationRolledBack(.init(id: mutationID, status: 422, reason: "rejected", body: Data("{\"error\":\"\u{01}bad\"}".utf8)))),
        LogRecord(lsn: 23, timestamp: TestClock.now, collection: "favourites",
                  event: .mutationRolledBack(.init(id: mutationID, status: nil, reason: "gave up after 5 attempts"))),
        LogRecord(lsn: 24, timestamp: TestClock.now, collection: "",
                  event: .checkpoint(.init(throughLSN: 19, throughTime: TestClock.now, keptLSNs: [20], removedCount: 18,
                                           entries: [.init(table: .marks, key: [0x61], value: [1])], policies: []))),
    ]

    @Test("each record's line is byte for byte what JSONSerialization wrote from jsonObject with sorted keys", arguments: records)
    func sameAsFoundation(record: LogRecord) throws {
        let foundation = try JSONSerialization.data(withJSONObject: record.jsonObject, options: [.sortedKeys, .withoutEscapingSlashes])
        #expect(record.jsonLine == String(decoding: foundation, as: UTF8.self))
    }

    @Test("times are written as the ISO 8601 formatter writes them, to the millisecond, for 20,000 log times")
    func iso8601() {
        let random = RandomSource.seeded(9)
        var dates = [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -0.0005), Date(timeIntervalSince1970: -1.5),
                     Date(timeIntervalSince1970: 951_782_400), Date(timeIntervalSince1970: 4_102_444_799.999), TestClock.now,
                     Date(timeIntervalSince1970: -62_135_596_800), Date(timeIntervalSince1970: 253_402_300_799.9994)]
        for _ in 0..<20_000 {
            // Log times are whole microseconds (docs/log-format.md §4), years 1900–2200.
            let micros = Int64(random.next() % 9_467_280_000_000_000) - 2_208_988_800_000_000
            dates.append(Date(timeIntervalSince1970: Double(micros) / 1_000_000))
        }
        for date in dates {
            var w = JSONWriter()
            LogRecord.writeISO8601(date, into: &w)
            var expected = JSONWriter()
            expected.string(LogRecord.iso8601(date))
            #expect(w.string == expected.string, "\(date.timeIntervalSince1970)")
        }
    }

    @Test("an unreadable record's line names its LSN and the error")
    func unreadable() {
        #expect(LogRecord.unreadableJSONLine(lsn: 7, message: "checksum \"mismatch\"") == #"{"error":"checksum \"mismatch\"","kind":"unreadable","lsn":7}"#)
    }
}
