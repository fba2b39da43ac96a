import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The live ``EventStreamTransport``: a `URLSession` of its own whose data delegate hands each
/// chunk of the body on as it arrives. (`URLSession.bytes(for:)` is not available in
/// FoundationNetworking on Linux, so the delegate is used on every platform.)
///
/// The session is set up like ``URLSessionTransport``'s: ephemeral, no `URLCache`, no cookie
/// or credential storage, redirects never followed. ``idleTimeout`` is URLSession's
/// `timeoutIntervalForRequest`, which for a stream is the longest silence between two chunks:
/// keep it longer than the server's keep-alive comment interval. On Linux it is rounded up to
/// whole seconds (see ``URLSessionTransport/Configuration/timeout``).
public final class URLSessionEventStreamTransport: EventStreamTransport {
    /// The longest silence between two chunks before the connection fails with ``TransportError/timedOut``.
    public let idleTimeout: Duration
    private let session: URLSession
    private let delegate = StreamingDelegate()

    /// Precondition (a programmer error): `idleTimeout` is greater than zero.
    public init(idleTimeout: Duration = .seconds(60)) {
        precondition(idleTimeout > .zero, "URLSessionEventStreamTransport needs an idle timeout greater than zero, got \(idleTimeout)")
        self.idleTimeout = URLSessionTransport.effectiveTimeout(idleTimeout)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpCookieStorage = nil
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpShouldSetCookies = false
        configuration.urlCredentialStorage = nil
        configuration.timeoutIntervalForRequest = self.idleTimeout.timeInterval
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.invalidateAndCancel()
    }

    public func open(_ request: HTTPRequest) async throws(TransportError) -> EventStreamResponse {
        guard !Task.isCancelled else { throw .requestCancelled(request) }
        let urlRequest = URLSessionTransport.urlRequest(for: request, timeout: idleTimeout)
        let task = session.dataTask(with: urlRequest)
        let (body, continuation) = AsyncThrowingStream<Data, any Error>.makeStream(bufferingPolicy: .unbounded)
        continuation.onTermination = { _ in task.cancel() }
        let delegate = self.delegate
        let timeout = idleTimeout
        let head = await withTaskCancellationHandler {
            await withCheckedContinuation { (head: CheckedContinuation<Result<URLResponse, any Error>, Never>) in
                delegate.register(task, head: head, body: continuation, request: request, timeout: timeout)
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
        let response: URLResponse
        switch head {
        case .success(let r): response = r
        case .failure(let error):
            continuation.finish()
            throw TransportError(mapping: error, request: request, timeout: timeout, taskIsCancelled: Task.isCancelled)
        }
        guard let http = response as? HTTPURLResponse else {
            task.cancel()
            throw TransportError(code: .badResponse, message: "not an HTTP response from \(TransportError.endpoint(of: request.url))", request: request)
        }
        return EventStreamResponse(status: http.statusCode, headers: URLSessionTransport.headers(of: http), url: http.url ?? request.url, body: body)
    }
}

/// Routes URLSession's delegate calls for streaming tasks: the head to the waiting `open`,
/// each chunk and the end to the body stream.
final class StreamingDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private struct Entry {
        var head: CheckedContinuation<Result<URLResponse, any Error>, Never>?
        var body: AsyncThrowingStream<Data, any Error>.Continuation
        var request: HTTPRequest
        var timeout: Duration
    }

    private let entries = Mutex<[Int: Entry]>([:])

    func register(_ task: URLSessionDataTask, head: CheckedContinuation<Result<URLResponse, any Error>, Never>,
                  body: AsyncThrowingStream<Data, any Error>.Continuation, request: HTTPRequest, timeout: Duration) {
        entries.withLock { $0[task.taskIdentifier] = Entry(head: head, body: body, request: request, timeout: timeout) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let head = entries.withLock { entries -> CheckedContinuation<Result<URLResponse, any Error>, Never>? in
            let head = entries[dataTask.taskIdentifier]?.head
            entries[dataTask.taskIdentifier]?.head = nil
            return head
        }
        completionHandler(.allow)
        head?.resume(returning: .success(response))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let body = entries.withLock { $0[dataTask.taskIdentifier]?.body }
        body?.yield(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = entries.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let head = entry.head {
            // Completed before a head arrived: `open` fails.
            head.resume(returning: .failure(error ?? URLError(.badServerResponse)))
            entry.body.finish()
            return
        }
        if let error {
            entry.body.finish(throwing: TransportError(mapping: error, request: entry.request, timeout: entry.timeout, taskIsCancelled: false))
        } else {
            entry.body.finish()
        }
    }
}
