/// A row of a snapshot that does not decode as the requested type: which collection, which
/// row, where in the row's JSON, and the `DecodingError` underneath.
///
/// Thrown by ``Snapshot/decodeRows(_:using:)`` and ``Snapshot/decodeIdentifiedRows(_:using:)``.
/// The message reads like
/// `row "3" of todos does not decode as Todo at completed: expected Bool, found a string`.
public struct RowDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The snapshot's collection.
    public var collection: String
    /// The row's ID (``Row/id``).
    public var rowID: String
    /// The failing position in the row's JSON, keys and `[index]` joined by `.`; empty for the
    /// row itself.
    public var codingPath: String
    /// The Swift type the row was decoded as.
    public var type: String
    /// The `DecodingError`'s own explanation (its context's `debugDescription`).
    public var reason: String

    public init(collection: String, rowID: String, codingPath: String, type: String, reason: String) {
        self.collection = collection
        self.rowID = rowID
        self.codingPath = codingPath
        self.type = type
        self.reason = reason
    }

    /// The error for row `rowID` of `collection` that failed to decode as `type` with
    /// `underlying`: a `DecodingError` gives its coding path (a missing key's name appended)
    /// and its context's explanation; any other error its description, with an empty path.
    public init(collection: String, rowID: String, type: Any.Type, underlying: any Error) {
        let (path, reason): ([any CodingKey], String) = switch underlying as? DecodingError {
        case .typeMismatch(_, let c)?, .valueNotFound(_, let c)?, .dataCorrupted(let c)?: (c.codingPath, c.debugDescription)
        case .keyNotFound(let key, let c)?: (c.codingPath + [key], c.debugDescription)
        case nil: ([], "\(underlying)")
        @unknown default: ([], "\(underlying)")
        }
        self.init(collection: collection, rowID: rowID, codingPath: Self.format(path), type: String(describing: type), reason: reason)
    }

    static func format(_ path: [any CodingKey]) -> String {
        path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }

    public var description: String {
        "row \(rowID.debugDescription) of \(collection) does not decode as \(type)\(codingPath.isEmpty ? "" : " at \(codingPath)"): \(reason)"
    }
}
