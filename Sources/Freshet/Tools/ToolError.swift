import Foundation

/// An error from a log tool (`replay`, `verify`, `stats`, `why`, `export`, `import`): a request the log cannot answer,
/// or a store that cannot be read. One line for a person; `freshet` exits with status 2.
///
/// Match on the code with `catch ToolError.pastEnd`.
public struct ToolError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let store = Code(rawValue: "store")
        public static let pastEnd = Code(rawValue: "pastEnd")
        public static let beforeFirstRecord = Code(rawValue: "beforeFirstRecord")
        public static let invalidLine = Code(rawValue: "invalidLine")
        public static let unknownKind = Code(rawValue: "unknownKind")
        public static let notEmpty = Code(rawValue: "notEmpty")
        public static let beforeCheckpoint = Code(rawValue: "beforeCheckpoint")
        public static let nothingToImport = Code(rawValue: "nothingToImport")
        public static let missingRecords = Code(rawValue: "missingRecords")

        /// Matches a ``ToolError`` by code.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? ToolError)?.code == code
        }
    }

    public let code: Code
    /// One line naming what went wrong and where (store path, LSN, line number).
    public let message: String
    /// The store error behind a ``store`` failure.
    public let underlying: StoreError?

    public init(_ code: Code, _ message: String, underlying: StoreError? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// Wraps a ``StoreError`` (not a store, newer format, LMDB failure) as a ``store`` failure.
    public init(_ error: StoreError) {
        self.init(.store, error.message, underlying: error)
    }

    public var description: String { message }

    /// The store could not be opened or read; ``underlying`` says why.
    public static let store = Code.store
    /// An LSN asked for is after the last record of the log.
    public static let pastEnd = Code.pastEnd
    /// A time asked for is before the first record of the log.
    public static let beforeFirstRecord = Code.beforeFirstRecord
    /// A JSON Lines line of an export is not JSON, or a field is missing or of the wrong type;
    /// the message names the line number and the field.
    public static let invalidLine = Code.invalidLine
    /// A JSON Lines line names an event kind this Freshet does not know.
    public static let unknownKind = Code.unknownKind
    /// `import` was given a directory that already holds something; it never writes into one.
    public static let notEmpty = Code.notEmpty
    /// An LSN or time asked for is before the latest checkpoint: compaction removed that
    /// history (the message names the checkpoint and the first LSN that can be visited).
    public static let beforeCheckpoint = Code.beforeCheckpoint
    /// `import` was given a file with no record (empty, blank lines only, or none at or before
    /// `--through`); no store is created.
    public static let nothingToImport = Code.nothingToImport
    /// `import` was given a log with LSNs missing where no checkpoint in it accounts for them
    /// (the rule `verify` applies, docs/operations.md): the message names the first missing
    /// LSN and the line after the gap; no store is created.
    public static let missingRecords = Code.missingRecords

    /// Keeps a ``ToolError``; wraps anything else as a ``store`` failure.
    static func wrapping(_ error: any Error, doing what: String) -> ToolError {
        if let error = error as? ToolError { return error }
        return ToolError(StoreError(error, doing: what))
    }
}
