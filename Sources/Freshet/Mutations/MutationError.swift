/// Why a mutation could not be proposed, or how it ended when it did not succeed.
///
/// Match on the code with `catch MutationError.rejected`.
public struct MutationError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The server answered a 4xx other than 401, 407, 408 and 429 (and other than 404 or
        /// 410 to a `DELETE`, which confirm it); the mutation was rolled back
        /// (``MutationError/status`` and ``MutationError/body`` say how). Final.
        public static let rejected = Code(rawValue: "rejected")
        /// It depended on a mutation (a provisional ID) that was rolled back; rolled back too.
        public static let dependencyRolledBack = Code(rawValue: "dependencyRolledBack")
        /// The server accepted it (2xx) but its answer has no usable row (not JSON, no ID).
        /// The mutation is confirmed without rows and the collection is invalidated, so a
        /// refetch brings the server's version.
        public static let malformedConfirmation = Code(rawValue: "malformedConfirmation")
        /// An op names a collection the store has never seen (no event, no registered
        /// resource): usually a typo. Register the resource first.
        public static let unknownCollection = Code(rawValue: "unknownCollection")
        /// The mutation is malformed (thrown by ``Store/mutate(_:)``, nothing appended): an
        /// empty request path, a bad collection name or row ID, an ID that was used before. A
        /// request that cannot be built at send time is not this: the mutation waits
        /// (``MutationWait/Code/invalidRequest``).
        public static let invalidMutation = Code(rawValue: "invalidMutation")
        /// Waiting for the outcome was cancelled; the mutation itself stays queued.
        public static let cancelled = Code(rawValue: "cancelled")
        /// The store could not append (closed, full, storage error), or closed while
        /// ``PendingMutation/outcome()`` waited (the mutation stays queued).
        public static let storage = Code(rawValue: "storage")

        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? MutationError)?.code == code
        }
    }

    public let code: Code
    /// One line for a person.
    public let message: String
    /// The mutation concerned, once it has an ID.
    public let mutationID: MutationID?
    /// The server's HTTP status, when it answered.
    public let status: Int?
    /// The server's response body, when it answered.
    public let body: String?

    public init(_ code: Code, _ message: String, mutationID: MutationID? = nil, status: Int? = nil, body: String? = nil) {
        self.code = code
        self.message = message
        self.mutationID = mutationID
        self.status = status
        self.body = body
    }

    public var description: String { message }

    public static let rejected = Code.rejected
    public static let dependencyRolledBack = Code.dependencyRolledBack
    public static let malformedConfirmation = Code.malformedConfirmation
    public static let unknownCollection = Code.unknownCollection
    public static let invalidMutation = Code.invalidMutation
    public static let cancelled = Code.cancelled
    public static let storage = Code.storage
}
