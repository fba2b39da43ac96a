import Foundation

/// A complete HTTP response, as an ``HTTPTransport`` returns it for any status code.
///
/// A 404 or a 503 is a response, not an error: the transport throws only when no response
/// arrived (see ``TransportError``). Classifying the status is the caller's job.
public struct HTTPResponse: Sendable, Hashable {
    /// The status code, e.g. `200`, `304`, `404` (RFC 9110 §15).
    public var status: Int
    /// The response header fields. See ``URLSessionTransport`` for what that transport can
    /// and cannot preserve (order, repeated lines).
    public var headers: HTTPHeaders
    /// The response content, after any `Content-Encoding` has been decoded by the transport;
    /// empty for `HEAD`, 204 and 304.
    public var body: Data
    /// The URL that produced this response: the request URL, or the last one after redirects.
    /// Resolve relative `Location` and `Link` URLs against it.
    public var url: URL
    /// How long the exchange took, from just before sending to having the whole body,
    /// measured with `ContinuousClock`.
    public var duration: Duration

    /// A response with the given parts; `duration` defaults to zero for scripted responses.
    public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data(), url: URL, duration: Duration = .zero) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
        self.duration = duration
    }
}
