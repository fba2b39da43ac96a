import Foundation

/// The error an ``HTTPTransport`` throws when it got no complete response: a code to branch
/// on, a message for people, and the request it was about.
///
/// Match a code directly in a `catch` clause:
///
/// ```swift
/// do {
///     let response = try await transport.send(request)
/// } catch TransportError.timedOut, TransportError.connectionLost {
///     // retry later with backoff
/// } catch TransportError.cancelled {
///     // the caller went away; record nothing
/// }
/// ```
///
/// `description` is one line: the message, then the method and path, e.g.
/// `cannot connect to 127.0.0.1:8080: connection refused or host unreachable (GET /api/v2/pokemon)`.
/// HTTP error statuses (4xx, 5xx) are responses, never a `TransportError`.
public struct TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, as a small open set of named constants.
    ///
    /// Platform error codes (such as `URLError.Code`) are mapped onto these and never appear in
    /// the public API; the message keeps the platform's wording.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code's name, e.g. `"timedOut"`.
        public let rawValue: String

        /// A code named `rawValue`. Use the static constants; this exists so another
        /// transport can add a code of its own.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The code's name.
        public var description: String { rawValue }

        /// No data arrived within the request's timeout. Usually worth retrying.
        /// `URLError.timedOut`.
        public static let timedOut = Code(rawValue: "timedOut")
        /// No connection could be made: refused, host unreachable, host name not found, or no
        /// network at all. The offline case. `URLError.cannotConnectToHost`, `.cannotFindHost`,
        /// `.dnsLookupFailed`, `.notConnectedToInternet`, `.internationalRoamingOff`,
        /// `.dataNotAllowed`, `.callIsActive`.
        public static let cannotConnect = Code(rawValue: "cannotConnect")
        /// The connection broke after it was made, before the response was complete. The
        /// server may have acted on the request. `URLError.networkConnectionLost`.
        public static let connectionLost = Code(rawValue: "connectionLost")
        /// The calling task was cancelled, or the request was cancelled. `URLError.cancelled`
        /// or Swift task cancellation.
        public static let cancelled = Code(rawValue: "cancelled")
        /// A response arrived but is not usable HTTP: unparsable, undecodable content, too many
        /// redirects, or not an HTTP response. `URLError.badServerResponse`,
        /// `.cannotParseResponse`, `.cannotDecodeRawData`, `.cannotDecodeContentData`,
        /// `.zeroByteResource`, `.httpTooManyRedirects`, `.redirectToNonExistentLocation`,
        /// `.dataLengthExceedsMaximum`.
        public static let badResponse = Code(rawValue: "badResponse")
        /// The exchange took longer than the request's overall ``HTTPRequest/deadline``
        /// (data may have kept arriving: a trickling server). Worth retrying like
        /// ``timedOut``.
        public static let deadlineExceeded = Code(rawValue: "deadlineExceeded")
        /// The response body is larger than ``HTTPRequest/maximumResponseBytes`` (announced by
        /// `Content-Length` or counted while it arrived); the rest was not read. Retrying gets
        /// the same answer.
        public static let responseTooLarge = Code(rawValue: "responseTooLarge")
        /// Anything else (TLS failures, unsupported URLs, ...); the message says what.
        public static let other = Code(rawValue: "other")

        /// Whether `error` is a `TransportError` with code `code`: what makes
        /// `catch TransportError.timedOut` work.
        public static func ~= (code: Code, error: TransportError) -> Bool {
            error.code == code
        }

        /// Whether `error` is a `TransportError` with code `code`, for untyped `catch` clauses.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? TransportError)?.code == code
        }
    }

    /// What went wrong.
    public var code: Code
    /// A short lowercase sentence for people, naming the host and port where it helps, e.g.
    /// `"timed out after 30 s waiting for pokeapi.co:443"`. Not meant to be parsed.
    public var message: String
    /// The method of the request that failed, when known.
    public var method: HTTPMethod?
    /// The URL of the request that failed, when known.
    public var url: URL?

    /// An error with `code` and `message` about the request `method url`.
    public init(code: Code, message: String, method: HTTPMethod? = nil, url: URL? = nil) {
        self.code = code
        self.message = message
        self.method = method
        self.url = url
    }

    /// An error with `code` and `message` about `request`.
    public init(code: Code, message: String, request: HTTPRequest) {
        self.init(code: code, message: message, method: request.method, url: request.url)
    }

    /// The message, followed by the method and the URL's path and query in parentheses when
    /// known: one line, e.g. `request cancelled (GET /api/v2/pokemon?limit=20)`. Secret query
    /// values are shown as `REDACTED` (``URLRedaction``'s default names).
    public var description: String {
        var context: [String] = []
        if let method { context.append(method.rawValue) }
        if let url {
            let path = url.path(percentEncoded: true)
            var target = path.isEmpty ? "/" : path
            if let query = url.query(percentEncoded: true) { target += URLRedaction().redact("?" + query) }
            context.append(target)
        }
        return context.isEmpty ? message : "\(message) (\(context.joined(separator: " ")))"
    }

    /// ``Code/timedOut``, for `catch TransportError.timedOut`.
    public static let timedOut = Code.timedOut
    /// ``Code/cannotConnect``, for `catch TransportError.cannotConnect`.
    public static let cannotConnect = Code.cannotConnect
    /// ``Code/connectionLost``, for `catch TransportError.connectionLost`.
    public static let connectionLost = Code.connectionLost
    /// ``Code/cancelled``, for `catch TransportError.cancelled`.
    public static let cancelled = Code.cancelled
    /// ``Code/badResponse``, for `catch TransportError.badResponse`.
    public static let badResponse = Code.badResponse
    /// ``Code/deadlineExceeded``, for `catch TransportError.deadlineExceeded`.
    public static let deadlineExceeded = Code.deadlineExceeded
    /// ``Code/responseTooLarge``, for `catch TransportError.responseTooLarge`.
    public static let responseTooLarge = Code.responseTooLarge
    /// ``Code/other``, for `catch TransportError.other`.
    public static let other = Code.other
}
