import Foundation

/// Opens long-lived HTTP responses whose body is read as it arrives, such as a
/// `text/event-stream` (WHATWG HTML §9.2). ``URLSessionEventStreamTransport`` is the live one;
/// tests pass a scripted one.
public protocol EventStreamTransport: Sendable {
    /// Sends `request` and returns once the response head arrived; the body follows in
    /// ``EventStreamResponse/body``. Redirects are not followed (a 3xx is returned).
    ///
    /// - Throws: ``TransportError`` when no response head arrived (``TransportError/cancelled``
    ///   when the calling task is cancelled).
    func open(_ request: HTTPRequest) async throws(TransportError) -> EventStreamResponse
}

/// A response whose body is still arriving.
public struct EventStreamResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The response's header fields.
    public var headers: HTTPHeaders
    /// The URL that answered.
    public var url: URL
    /// The body's bytes in the order they arrive, in chunks of any size. It finishes when the
    /// server ends the response and throws a ``TransportError`` when the connection fails
    /// (lost, idle timeout). Ending the iteration (or cancelling the iterating task) closes
    /// the connection.
    public var body: AsyncThrowingStream<Data, any Error>

    public init(status: Int, headers: HTTPHeaders, url: URL, body: AsyncThrowingStream<Data, any Error>) {
        self.status = status
        self.headers = headers
        self.url = url
        self.body = body
    }
}
