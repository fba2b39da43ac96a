/// Why a refresh failed. A failure the server or the network caused was also appended to the
/// log as a `fetchFailed` event (``lsn``); `invalidURL`, `storage` and `cancelled` append
/// nothing. The collection keeps its previous rows.
///
/// Match on the code with `catch FetchError.httpStatus`.
public struct FetchError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The server answered with a status outside 200–299 (see ``FetchError/status``).
        public static let httpStatus = Code(rawValue: "httpStatus")
        /// The request timed out.
        public static let timedOut = Code(rawValue: "timedOut")
        /// The connection was refused or the host could not be reached (offline).
        public static let cannotConnect = Code(rawValue: "cannotConnect")
        /// The connection dropped during the exchange.
        public static let connectionLost = Code(rawValue: "connectionLost")
        /// The task was cancelled; nothing more was appended (earlier attempts stay in the log).
        public static let cancelled = Code(rawValue: "cancelled")
        /// The body is not JSON of the expected shape, or not JSON at all.
        public static let malformedBody = Code(rawValue: "malformedBody")
        /// Paging did not end: a `next` URL names the page itself or an earlier page (within one
        /// refresh, or among the pages an infinite list has loaded), however it is spelled
        /// (compared as ``ComparableURL``: query order, default port, percent-encoding case, a
        /// trailing `?`). Nothing is sent to it; paging stops and the pages before are kept.
        public static let pagingLoop = Code(rawValue: "pagingLoop")
        /// The collection already has ``Configuration/maxPages`` pages (one refresh walked
        /// that many, or an infinite list holds that many) and a page names one more: nothing
        /// is sent for it; paging stops and the pages so far are kept. Not retried.
        public static let tooManyPages = Code(rawValue: "tooManyPages")
        /// A page of a paged resource holds the same row ID twice: the page is not folded and
        /// paging stops there (the pages before it are kept). Not retried.
        public static let duplicateRowIDs = Code(rawValue: "duplicateRowIDs")
        /// A page of a paged resource has no rows yet names a next page: paging stops there
        /// (it could go on forever), the empty page is not folded and the pages before it are
        /// kept. Not retried. (An empty *last* page is a valid, empty end.)
        public static let emptyPage = Code(rawValue: "emptyPage")
        /// The resource's path does not make an http(s) URL.
        public static let invalidURL = Code(rawValue: "invalidURL")
        /// The whole exchange took longer than ``Configuration/requestDeadline``. Retried like
        /// ``timedOut``.
        public static let deadlineExceeded = Code(rawValue: "deadlineExceeded")
        /// The response body is larger than ``Configuration/maxResponseBytes``; the rest was
        /// not read. Not retried.
        public static let responseTooLarge = Code(rawValue: "responseTooLarge")
        /// A `next` page (body field or `Link` header) is on another origin than the refresh's
        /// first request: paging stops there and nothing is sent to it (docs/security.md). The
        /// pages before it are kept. Not retried.
        public static let crossOrigin = Code(rawValue: "crossOrigin")
        /// Another transport failure (including more than ``Configuration/maxRedirects``
        /// redirects).
        public static let transport = Code(rawValue: "transport")
        /// The response could not be appended to the store (see the message).
        public static let storage = Code(rawValue: "storage")

        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? FetchError)?.code == code
        }
    }

    public let code: Code
    /// One line for a person.
    public let message: String
    /// The HTTP status, when the server answered.
    public let status: Int?
    /// The URL that failed, redacted (``Configuration/redactedQueryParameters``, no userinfo).
    public let url: String
    /// The LSN of the `fetchFailed` event that recorded this failure, if one was appended.
    public var lsn: LSN?

    public init(_ code: Code, _ message: String, status: Int? = nil, url: String, lsn: LSN? = nil) {
        self.code = code
        self.message = message
        self.status = status
        self.url = url
        self.lsn = lsn
    }

    public var description: String { message }

    public static let httpStatus = Code.httpStatus
    public static let timedOut = Code.timedOut
    public static let cannotConnect = Code.cannotConnect
    public static let connectionLost = Code.connectionLost
    public static let cancelled = Code.cancelled
    public static let malformedBody = Code.malformedBody
    public static let pagingLoop = Code.pagingLoop
    public static let tooManyPages = Code.tooManyPages
    public static let invalidURL = Code.invalidURL
    public static let duplicateRowIDs = Code.duplicateRowIDs
    public static let emptyPage = Code.emptyPage
    public static let deadlineExceeded = Code.deadlineExceeded
    public static let responseTooLarge = Code.responseTooLarge
    public static let crossOrigin = Code.crossOrigin
    public static let transport = Code.transport
    public static let storage = Code.storage
}
