import Foundation

/// Decodes `Decodable` values from row JSON, reading from a ``JSONTape`` instead of
/// Foundation objects — several times faster than `JSONDecoder` for rows.
///
/// It behaves like a `JSONDecoder` with default settings: keys used as they are
/// (`.useDefaultKeys`), `Date` as seconds since 2001-01-01 (`.deferredToDate`), `Data` as
/// Base64 (`.base64`), non-finite numbers rejected (`.throw`), `URL` from a string, `Decimal`
/// from a number, the first of duplicate keys wins, nesting up to 512 levels. Integers must be
/// exact (`1.5` is not an `Int`; `2.0` and `1e2` are). Errors are `DecodingError`s with the
/// same case and coding path JSONDecoder reports, with one difference: a number that does not
/// fit its type (`300` as `Int8`, `1.5` as `Int`, `1e400`) is `dataCorrupted` at the path of
/// that number, where JSONDecoder reports "not valid JSON" with an empty path.
///
/// ```swift
/// struct Todo: Decodable { var id: Int; var title: String; var completed: Bool }
/// let todo = try RowDecoder().decode(Todo.self, from: row.json)
/// ```
public struct RowDecoder: Sendable {
    public init() {}

    /// Decodes `json` (UTF-8 JSON text; any value at the top level) as `T`.
    /// - Throws: `DecodingError.dataCorrupted` (empty coding path) when `json` is not JSON;
    ///   otherwise the `DecodingError` of the first value that does not fit `T`.
    public func decode<T: Decodable>(_ type: T.Type = T.self, from json: Data) throws -> T {
        try json.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            let tape: JSONTape
            do {
                tape = try JSONTape(parsing: bytes)
            } catch {
                throw Self.notJSON(error)
            }
            let decoder = TapeDecoder(tape: tape, bytes: bytes)
            return try decoder.unbox(T.self, at: 0)
        }
    }

    /// JSONDecoder's error for input that is not JSON.
    static func notJSON(_ error: any Error) -> DecodingError {
        DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "The given data was not valid JSON: \(error)", underlyingError: error))
    }
}

extension JSONDecoder {
    /// Whether this decoder has every default setting, so ``RowDecoder`` decodes the same.
    var hasDefaultSettings: Bool {
        guard case .useDefaultKeys = keyDecodingStrategy, case .deferredToDate = dateDecodingStrategy,
              case .base64 = dataDecodingStrategy, case .throw = nonConformingFloatDecodingStrategy,
              userInfo.isEmpty, !allowsJSON5, !assumesTopLevelDictionary
        else { return false }
        return true
    }
}
