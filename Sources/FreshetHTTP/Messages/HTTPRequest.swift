import Foundation

/// One HTTP request to send through an ``HTTPTransport``: a plain value, built and compared
/// without any session.
///
/// ```swift
/// var request = HTTPRequest(url: URL(string: "https://pokeapi.co/api/v2/pokemon?limit=20")!)
/// request.headers.set(name: "If-None-Match", value: #"W/"abc""#)
/// request.timeout = .seconds(10)
/// ```
///
/// The transport sends ``headers`` as given. It adds no conditional headers of its own; what
/// the platform's HTTP stack adds on top is listed on ``URLSessionTransport``.
public struct HTTPRequest: Sendable, Hashable {
    /// The request method; `GET` by default.
    public var method: HTTPMethod
    /// The target URL, absolute (`http` or `https`), including any query.
    public var url: URL
    /// The header fields to send, in order.
    public var headers: HTTPHeaders
    /// The content to send, or `nil` for none. Set a `Content-Type` header with it: a
    /// transport may otherwise add a default one.
    public var body: Data?
    /// How long the request may wait without receiving data before it fails with
    /// ``TransportError/timedOut``, or `nil` for the transport's default. An idle timeout,
    /// not a deadline for the whole exchange; on Linux, ``URLSessionTransport`` rounds it up to
    /// whole seconds (see ``URLSessionTransport/Configuration/timeout``). Must be greater than
    /// zero.
    public var timeout: Duration?
    /// The longest the whole exchange may take, from sending to the last body byte, or `nil`
    /// for the transport's default. Unlike ``timeout`` it does not restart when data arrives,
    /// so a server that trickles bytes cannot keep a request alive: past it the transport
    /// throws ``TransportError/deadlineExceeded``. Must be greater than zero.
    public var deadline: Duration?
    /// The largest response body accepted, in bytes after content decoding, or `nil` for the
    /// transport's default. Enforced while the body arrives: the transport stops reading past
    /// it (and at once when `Content-Length` announces more) and throws
    /// ``TransportError/responseTooLarge``. Must be at least 0.
    public var maximumResponseBytes: Int?

    /// A request for `url`; by default a `GET` without headers, body or timeout, deadline and
    /// size overrides.
    public init(
        method: HTTPMethod = .get,
        url: URL,
        headers: HTTPHeaders = [:],
        body: Data? = nil,
        timeout: Duration? = nil,
        deadline: Duration? = nil,
        maximumResponseBytes: Int? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.deadline = deadline
        self.maximumResponseBytes = maximumResponseBytes
    }
}
