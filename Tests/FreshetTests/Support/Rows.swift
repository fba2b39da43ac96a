import Foundation
import Freshet

/// A row whose JSON is `{"name":"<name>"}`.
func row(_ id: String, _ name: String? = nil) -> Row {
    Row(id: id, json: Data(#"{"name":"\#(name ?? "row \(id)")"}"#.utf8))
}

/// Rows with these IDs, each named `row <id>`.
func rows(_ ids: String...) -> [Row] {
    ids.map { row($0) }
}

/// A 200 response description for events appended by hand.
func response(_ url: String = "http://stub.invalid/items", status: Int = 200, etag: String? = nil, cacheControl: String? = nil) -> ResponseInfo {
    ResponseInfo(url: url, status: status, etag: etag, cacheControl: cacheControl)
}

/// A `fetched` event placing `rows` as page `index`.
func page(_ index: Int, isLast: Bool, _ rows: [Row], next: String? = nil) -> Event {
    .fetched(Event.Fetched(placement: .page(index: index, isLast: isLast), rows: rows, response: response(), nextCursor: isLast ? nil : next))
}

/// A `fetched` event replacing the collection with `rows`.
func replace(_ rows: [Row], etag: String? = nil) -> Event {
    .fetched(Event.Fetched(placement: .replace, rows: rows, response: response(etag: etag)))
}

/// The `name` of a row's JSON object.
func name(of row: Row) throws -> String {
    struct Named: Decodable { let name: String }
    return try row.decode(Named.self).name
}
