/// Something that sends one ``HTTPRequest`` and returns its ``HTTPResponse``: the only way
/// Freshet talks to the network, so tests can pass a scripted transport instead.
///
/// ```swift
/// let transport: any HTTPTransport = URLSessionTransport()
/// do {
///     let response = try await transport.send(HTTPRequest(url: url))
///     print(response.status)
/// } catch TransportError.cannotConnect {
///     // offline: keep showing the stored rows
/// }
/// ```
///
/// Contract for conforming types:
/// - Every status code is a response, returned, never thrown (a 500 is an answer).
/// - Failures to get a response throw a ``TransportError`` and nothing else.
/// - Cancellation of the calling task before or during the exchange throws
///   ``TransportError/cancelled``.
/// - The request's headers are sent as given; a transport must not add validators
///   (`If-None-Match`, `If-Modified-Since`) or answer from a cache of its own, because the
///   store is the cache (RFC 9111 is applied by the store, not the transport).
public protocol HTTPTransport: Sendable {
    /// Sends `request` and waits for the complete response.
    ///
    /// - Returns: the response, whatever its status code.
    /// - Throws: ``TransportError`` when no complete response arrived: ``TransportError/timedOut``,
    ///   ``TransportError/cannotConnect``, ``TransportError/connectionLost``,
    ///   ``TransportError/cancelled``, ``TransportError/badResponse`` or ``TransportError/other``.
    func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse
}
