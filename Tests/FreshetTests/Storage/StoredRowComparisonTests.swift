import Foundation
import Testing
@testable import Freshet

/// `MaterializedState.same(_:header:json:)` decides, without encoding the row, whether an upsert
/// writes: it must answer exactly what comparing with `encodeRow` byte for byte answers.
@Suite("A stored row compared with a row in place")
struct StoredRowComparisonTests {
    static func same(_ stored: [UInt8], _ row: Row) -> Bool {
        stored.withUnsafeBytes { MaterializedState.same($0, header: MaterializedState.rowHeader(row), json: row.json) }
    }

    @Test("a row's own encoding is the same; another ID, JSON or length of either is not")
    func ownEncoding() {
        let row = Row(id: "pikachu", json: Data(#"{"name":"pikachu"}"#.utf8))
        let encoded = MaterializedState.encodeRow(row)
        #expect(encoded.count == 1 + 7 + 18)
        #expect(Self.same(encoded, row))
        #expect(!Self.same(encoded, Row(id: "pikachv", json: row.json)))
        #expect(!Self.same(encoded, Row(id: "pikach", json: Data(#"u{"name":"pikachu"}"#.utf8))))
        #expect(!Self.same(encoded, Row(id: "pikachu", json: Data(#"{"name":"pikachu"} "#.utf8))))
        #expect(!Self.same(encoded, Row(id: "pikachu", json: Data(#"{"name":"pikachV"}"#.utf8))))
        #expect(!Self.same(Array(encoded.dropLast()), row))
        #expect(!Self.same([], row))
        #expect(Self.same([0], Row(id: "", json: Data())))
        #expect(!Self.same([0, 0x7B], Row(id: "", json: Data())))
    }

    @Test("an ID of 200 bytes (a two-byte length) compares equal only to its shortest length encoding")
    func lengthEncodings() {
        let id = String(repeating: "a", count: 200)
        let row = Row(id: id, json: Data("[]".utf8))
        let encoded = MaterializedState.encodeRow(row)
        #expect(Array(encoded.prefix(2)) == [0xC8, 0x01])
        #expect(Self.same(encoded, row))
        // The same length as a three-byte varint: reads as 200, but is not what encodeRow writes.
        let padded = [0xC8, 0x81, 0x00] + Array(encoded.dropFirst(2))
        #expect(!Self.same(padded, row))
        // A length that runs past the end, and one that never ends.
        #expect(!Self.same([0xFF], row))
        #expect(!Self.same(Array(repeating: 0xFF, count: 11), row))
    }
}
