import Foundation
import Testing
@testable import Freshet

/// `MaterializedState.same(_:id:json:)` decides, without encoding the row, whether an upsert
/// writes: it must answer exactly what comparing with `encodeRow` byte for byte answers.
@Suite("A stored row compared with a row in place")
struct StoredRowComparisonTests {
    static func same(_ stored: [UInt8], _ row: Row) -> Bool {
        var id = row.id
        return id.withUTF8 { id in stored.withUnsafeBytes { MaterializedState.same($0, id: UnsafeRawBufferPointer(id), json: row.json) } }
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

    @Test("IDs of 0 to 300 bytes (one-, two- and three-byte lengths around 127, 128 and 255) compare equal to their own encoding, not to a neighbour's")
    func everyLength() {
        let json = Data("{}".utf8)
        for n in 0...300 {
            let row = Row(id: String(repeating: "x", count: n), json: json)
            let encoded = MaterializedState.encodeRow(row)
            #expect(encoded.count == (n < 128 ? 1 : 2) + n + 2, "length \(n)")
            #expect(Self.same(encoded, row), "length \(n)")
            #expect(!Self.same(encoded, Row(id: String(repeating: "x", count: n + 1), json: json)), "length \(n) + 1")
            #expect(!Self.same(encoded, Row(id: String(repeating: "x", count: n + 1), json: Data("}".utf8))), "length \(n) + 1, JSON one shorter")
            // Every byte of the encoding changed in turn.
            for i in encoded.indices {
                var changed = encoded
                changed[i] ^= 0x01
                #expect(!Self.same(changed, row), "length \(n), byte \(i)")
            }
        }
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
