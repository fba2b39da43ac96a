import Foundation
@testable import Freshet
import Testing

/// Rows with their IDs (issue 10 item 5).
@Suite("Rows decoded with their IDs; decoding errors name the row")
struct IdentifiedRowTests {
    struct Todo: Decodable, Hashable {
        var title: String
        var completed: Bool
    }

    static func snapshot(_ rows: [(String, String)]) -> Snapshot {
        Snapshot(collection: "todos", rows: rows.map { Row(id: $0.0, json: Data($0.1.utf8)) }, syncMark: nil, status: .fresh, lsn: 3)
    }

    @Test("decodeIdentifiedRows keeps each row's ID, a provisional one included, in order")
    func keepsIDs() throws {
        let s = Self.snapshot([("1", #"{"completed":true,"title":"Walk"}"#), ("p-7", #"{"completed":false,"title":"Buy milk"}"#)])
        let rows = try s.decodeIdentifiedRows(Todo.self)
        #expect(rows == [IdentifiedRow(id: "1", value: Todo(title: "Walk", completed: true)),
                         IdentifiedRow(id: "p-7", value: Todo(title: "Buy milk", completed: false))])
        #expect(try s.decodeRows(Todo.self) == rows.map(\.value))
    }

    @Test("a row that does not decode names the collection, the row ID and the coding path", arguments: [
        (#"{"completed":"yes","title":"x"}"#, "completed"),
        (#"{"completed":true}"#, "title"),
        (#"[1]"#, ""),
    ])
    func namesTheRow(json: String, path: String) throws {
        let s = Self.snapshot([("1", #"{"completed":true,"title":"Walk"}"#), ("42", json)])
        let error = #expect(throws: RowDecodingError.self) { try s.decodeIdentifiedRows(Todo.self) }
        #expect(error?.collection == "todos")
        #expect(error?.rowID == "42")
        #expect(error?.codingPath == path)
        #expect(error?.type == "Todo")
        #expect(error?.description.hasPrefix(#"row "42" of todos does not decode as Todo"#) == true)
        #expect(throws: RowDecodingError.self) { try s.decodeRows(Todo.self) }
    }

    @Test("a custom JSONDecoder is used and its errors are named the same way")
    func customDecoder() throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        struct Item: Decodable, Hashable { var userId: Int }
        let s = Self.snapshot([("9", #"{"user_id":"x"}"#)])
        let error = #expect(throws: RowDecodingError.self) { try s.decodeIdentifiedRows(Item.self, using: decoder) }
        #expect(error?.rowID == "9")
        #expect(error?.codingPath == "userId")
    }
}
