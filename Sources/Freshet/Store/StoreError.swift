/// An error from opening, reading or writing a store.
///
/// Match on the code with `catch StoreError.alreadyOpen`; the message is one line for a person.
/// Nothing that was committed before an error is lost: a failed write transaction leaves
/// the log and the materialized state exactly as they were.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let alreadyOpen = Code(rawValue: "alreadyOpen")
        public static let notAStore = Code(rawValue: "notAStore")
        public static let locked = Code(rawValue: "locked")
        public static let closed = Code(rawValue: "closed")
        public static let mapFull = Code(rawValue: "mapFull")
        public static let corruptRecord = Code(rawValue: "corruptRecord")
        public static let checksumMismatch = Code(rawValue: "checksumMismatch")
        public static let unknownEventKind = Code(rawValue: "unknownEventKind")
        public static let unsupportedFormat = Code(rawValue: "unsupportedFormat")
        public static let invalidName = Code(rawValue: "invalidName")
        public static let invalidEvent = Code(rawValue: "invalidEvent")
        public static let unknownCollection = Code(rawValue: "unknownCollection")
        public static let storage = Code(rawValue: "storage")
        public static let diskFull = Code(rawValue: "diskFull")
        public static let permissionDenied = Code(rawValue: "permissionDenied")
        public static let logExhausted = Code(rawValue: "logExhausted")
        public static let invalidConfiguration = Code(rawValue: "invalidConfiguration")
        public static let corrupted = Code(rawValue: "corrupted")
        public static let mutationsPending = Code(rawValue: "mutationsPending")

        /// Matches a ``StoreError`` by code, so callers write `catch StoreError.mapFull`.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? StoreError)?.code == code
        }
    }

    public let code: Code
    /// One line that says what happened, for a person.
    public let message: String
    /// The LSN of the record concerned, when there is one.
    public let lsn: LSN?

    public init(_ code: Code, _ message: String, lsn: LSN? = nil) {
        self.code = code
        self.message = message
        self.lsn = lsn
    }

    public var description: String { message }

    /// The directory is already open as a store in this process (LMDB must not open one
    /// environment twice in a process: "Do not have open an LMDB database twice in the same process").
    public static let alreadyOpen = Code.alreadyOpen
    /// The directory does not exist, or holds no store.
    public static let notAStore = Code.notAStore
    /// Another process holds the store in a way that prevents opening it.
    public static let locked = Code.locked
    /// The store was closed.
    public static let closed = Code.closed
    /// The memory map is full (LMDB `MDB_MAP_FULL`): open with a larger `mapSize`.
    public static let mapFull = Code.mapFull
    /// A log record or materialized value is malformed.
    public static let corruptRecord = Code.corruptRecord
    /// A log record fails its CRC-32C.
    public static let checksumMismatch = Code.checksumMismatch
    /// A log record has an event kind this version does not know.
    public static let unknownEventKind = Code.unknownEventKind
    /// The store or a record was written by an unknown format version.
    public static let unsupportedFormat = Code.unsupportedFormat
    /// A collection name or row ID is empty, too long or not allowed.
    public static let invalidName = Code.invalidName
    /// An event cannot be appended (for example a row without an ID, or a row whose JSON is
    /// not exactly one JSON value).
    public static let invalidEvent = Code.invalidEvent
    /// ``Store/push(_:to:origin:)`` named a collection the store does not know (no registered
    /// resource, no SyncMark): the same rule as ``MutationError/unknownCollection``.
    public static let unknownCollection = Code.unknownCollection
    /// LMDB reported an error; the message carries LMDB's text and code.
    public static let storage = Code.storage
    /// The file system is full (`ENOSPC`, or `EFBIG` from a file size limit) while creating or
    /// growing a store file; the message names the file. Nothing committed is lost, and a
    /// store that could not be created leaves no files behind.
    public static let diskFull = Code.diskFull
    /// The store directory or one of its files may not be read or written by this process
    /// (`EACCES`, `EPERM`, or `EROFS` for a read-only file system); the message names the path.
    public static let permissionDenied = Code.permissionDenied
    /// The log has used its last LSN (2⁶⁴ − 1): nothing more can be appended. Reads still work.
    public static let logExhausted = Code.logExhausted
    /// A ``Configuration`` value is out of range (a map size below 1, a reader table outside
    /// 1 ... 100,000); nothing was opened.
    public static let invalidConfiguration = Code.invalidConfiguration
    /// The store's `data.mdb` is damaged: a check made before LMDB maps the file (the meta
    /// pages, the file size, every page LMDB would follow; see docs/reliability.md, "Damaged
    /// files") found a page LMDB would crash on. Nothing was opened or changed. Recover with
    /// ``Store/recoverDamaged(directory:configuration:dependencies:)``: it keeps the damaged
    /// directory for a bug report, starts an empty store whose LSNs continue the old ones,
    /// and carries over the local-only rows and the pending mutations still readable in the
    /// old log.
    public static let corrupted = Code.corrupted
    /// ``Store/signOut(force:)`` refused: mutations are still waiting to be sent; the message
    /// says how many. Send them first, or pass `force: true` to discard them.
    public static let mutationsPending = Code.mutationsPending
}
