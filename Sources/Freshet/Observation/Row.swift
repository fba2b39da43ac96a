import Foundation

/// One row of a collection: a string ID and the row's JSON document.
///
/// Rows from the network hold the server's JSON object for that row, re-serialized with
/// sorted keys and no insignificant white space (values unchanged).
public struct Row: Sendable, Hashable, Identifiable {
    /// The row's ID, unique within its collection.
    public let id: String
    /// The row's JSON document, UTF-8. Every row the store hands out (snapshots, a ``Replay``,
    /// decoded log records) holds a `Data` of its own, indexed from 0; only the log tools' chunks
    /// share blocks between rows internally (docs/architecture.md, `Tools/`).
    public let json: Data

    public init(id: String, json: Data) {
        self.id = id
        self.json = json
    }

    /// Makes a row from any `Encodable` value (encoded with sorted keys).
    /// - Throws: whatever `JSONEncoder` throws for `value`.
    public init(id: String, encoding value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        self.init(id: id, json: try encoder.encode(value))
    }

    /// The row with its JSON in storage of its own, indexed from 0: what a row handed to
    /// users is. A fetched row's JSON may be a slice of its response body inside the library
    /// (``RowExtraction/Result/rows``).
    var rebased: Row {
        json.startIndex == 0 ? self : Row(id: id, json: Data(json))
    }

    /// Decodes the row's JSON as `T`: with ``RowDecoder`` when `decoder` has every default
    /// setting (the default), otherwise with `decoder` itself.
    /// - Throws: `DecodingError` when the JSON does not fit `T`.
    public func decode<T: Decodable>(_ type: T.Type = T.self, using decoder: JSONDecoder = JSONDecoder()) throws -> T {
        if decoder.hasDefaultSettings { return try RowDecoder().decode(T.self, from: json) }
        return try decoder.decode(T.self, from: json)
    }
}
