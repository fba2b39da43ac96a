import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The live ``HTTPTransport``: one `URLSession` of its own, set up so that nothing but the
/// store decides what is cached.
///
/// ```swift
/// let transport = URLSessionTransport(configuration: .init(timeout: .seconds(10)))
/// let response = try await transport.send(HTTPRequest(url: url))
/// ```
///
/// The session is `.ephemeral` with `urlCache = nil` and `requestCachePolicy =
/// .reloadIgnoringLocalCacheData`, so `URLCache` never answers for the store and never adds
/// `If-None-Match` / `If-Modified-Since` of its own: a 304 reaches the caller as a 304 (RFC
/// 9111 is applied by the store). Cookie and credential storage are off too, so no `Cookie` or
/// `Authorization` header is added from earlier responses. `waitsForConnectivity` stays off:
/// offline fails at once with ``TransportError/cannotConnect``.
///
/// Redirects are never followed here: a 3xx is returned as the response, and
/// ``HTTPTransport/send(_:following:)`` follows it under Freshet's own rules (origins,
/// methods, a bounded count). URLSession's own following would re-send a 307 `POST` with an
/// empty body on Linux, drop the trailing slash of a relative `Location`, and keep every header
/// (`Authorization` included) on the way to another origin.
///
/// Limits: the body is collected as it arrives and the exchange is cancelled as soon as it
/// passes ``HTTPRequest/maximumResponseBytes`` (or ``Configuration/maximumResponseBytes``), or
/// at once when `Content-Length` announces more, so memory stays bounded by the limit; an
/// overall ``HTTPRequest/deadline`` (or ``Configuration/deadline``) cancels an exchange that
/// is still running, however steadily data arrives.
///
/// What the platform still does, and the caller should know:
/// - libcurl (Linux) adds `Host`, `Connection`, `Accept: */*`, `Accept-Encoding` (deflate,
///   gzip, br, zstd), `Accept-Language` and a `User-Agent` unless the request sets them; content
///   is decoded, so ``HTTPResponse/body`` is the decoded body. Apple platforms add similar ones.
/// - Repeated request header lines are sent as one line, values joined with `,`.
/// - FoundationNetworking adds `Content-Type: application/x-www-form-urlencoded` to a `POST`
///   that has none; set the content type with the body.
/// - Response headers come from `HTTPURLResponse.allHeaderFields`: one entry per name, repeated
///   lines already joined with `", "`, original order lost. They are returned sorted by
///   lowercased name so the result is deterministic. On Linux, names may come back
///   re-capitalized (`ETag` as `Etag`; lookups ignore case anyway), and repeated lines whose
///   names differ in case (`Cache-Control` then `cache-control`) keep only the last value.
///
/// Cancellation: if the calling task is cancelled before the request starts, or while it is in
/// flight, `send` throws ``TransportError/cancelled`` (URLSession's async API cancels the data
/// task; checked to work with FoundationNetworking on Linux). A response that completed before
/// the cancellation was seen is returned.
public final class URLSessionTransport: HTTPTransport {
    /// The settings this transport was created with.
    public let configuration: Configuration
    private let session: URLSession
    private let delegate = SessionDelegate()

    /// A transport with its own `URLSession` built from `configuration`.
    ///
    /// Preconditions (programmer errors): `configuration.timeout` is greater than zero and
    /// `configuration.maximumConnectionsPerHost` is at least 1.
    public init(configuration: Configuration = Configuration()) {
        precondition(configuration.timeout > .zero, "URLSessionTransport needs a timeout greater than zero, got \(configuration.timeout)")
        precondition(configuration.maximumConnectionsPerHost >= 1, "URLSessionTransport needs maximumConnectionsPerHost >= 1, got \(configuration.maximumConnectionsPerHost)")
        precondition(configuration.deadline > .zero, "URLSessionTransport needs a deadline greater than zero, got \(configuration.deadline)")
        precondition(configuration.maximumResponseBytes >= 0, "URLSessionTransport needs maximumResponseBytes >= 0, got \(configuration.maximumResponseBytes)")
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.httpCookieStorage = nil
        sessionConfiguration.httpCookieAcceptPolicy = .never
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.urlCredentialStorage = nil
        sessionConfiguration.timeoutIntervalForRequest = Self.effectiveTimeout(configuration.timeout).timeInterval
        sessionConfiguration.httpMaximumConnectionsPerHost = configuration.maximumConnectionsPerHost
        session = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Sends `request` and returns the complete response, whatever its status (a 3xx
    /// included: redirects are not followed).
    ///
    /// ``HTTPResponse/duration`` runs from just before the request is handed to URLSession to
    /// the end of the body, on `ContinuousClock`.
    ///
    /// Preconditions: `request.timeout` and `request.deadline`, when set, are greater than
    /// zero; `request.maximumResponseBytes`, when set, is at least 0. On Linux the idle
    /// timeout is rounded up to whole seconds (see ``Configuration/timeout``).
    ///
    /// - Throws: ``TransportError`` when no complete HTTP response arrived:
    ///   ``TransportError/cancelled`` when the calling task is cancelled before or during the
    ///   request; ``TransportError/deadlineExceeded`` past the overall deadline;
    ///   ``TransportError/responseTooLarge`` when the body passes the size limit; otherwise
    ///   the mapping of the `URLError` listed on ``TransportError/Code``;
    ///   ``TransportError/badResponse`` when the response is not an HTTP response.
    public func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        let requestedTimeout = request.timeout ?? configuration.timeout
        precondition(requestedTimeout > .zero, "HTTPRequest.timeout must be greater than zero, got \(requestedTimeout)")
        let deadline = request.deadline ?? configuration.deadline
        precondition(deadline > .zero, "HTTPRequest.deadline must be greater than zero, got \(deadline)")
        let limit = request.maximumResponseBytes ?? configuration.maximumResponseBytes
        precondition(limit >= 0, "HTTPRequest.maximumResponseBytes must be at least 0, got \(limit)")
        let timeout = Self.effectiveTimeout(requestedTimeout)
        guard !Task.isCancelled else { throw .requestCancelled(request) }

        let urlRequest = Self.urlRequest(for: request, timeout: timeout)
        let clock = ContinuousClock()
        let start = clock.now
        let task = session.dataTask(with: urlRequest)
        let delegate = self.delegate
        delegate.register(task, limit: limit)
        let watchdog = Task {
            do {
                try await clock.sleep(for: deadline)
            } catch {
                return // the exchange ended first
            }
            delegate.expire(task)
            task.cancel()
        }
        let completion = await withTaskCancellationHandler {
            await delegate.run(task)
        } onCancel: {
            task.cancel()
        }
        watchdog.cancel()
        let duration = start.duration(to: clock.now)
        let endpoint = TransportError.endpoint(of: request.url)
        if completion.tooLarge {
            throw TransportError(code: .responseTooLarge, message: "response from \(endpoint) is larger than the limit of \(limit) bytes", request: request)
        }
        if completion.expired {
            throw TransportError(code: .deadlineExceeded, message: "no complete response from \(endpoint) within the \(deadline.shortDescription) deadline", request: request)
        }
        if let error = completion.error {
            throw TransportError(mapping: error, request: request, timeout: timeout, taskIsCancelled: Task.isCancelled)
        }
        guard let httpResponse = completion.response as? HTTPURLResponse else {
            throw TransportError(code: .badResponse, message: "not an HTTP response from \(endpoint)", request: request)
        }
        return HTTPResponse(
            status: httpResponse.statusCode,
            headers: Self.headers(of: httpResponse),
            body: completion.body,
            url: httpResponse.url ?? request.url,
            duration: duration
        )
    }

    /// The idle timeout URLSession will really apply for `requested`.
    ///
    /// FoundationNetworking (Linux) arms its timer with `Int(timeoutInterval) * 1000`
    /// milliseconds: fractions of a second are truncated, and anything under one second
    /// becomes 0 ms, which was observed to fail at once or to fall back to a 30 s timer. So on
    /// Linux the timeout is rounded up to whole seconds (at least 1 s); Apple platforms take it
    /// as given.
    static func effectiveTimeout(_ requested: Duration) -> Duration {
        #if canImport(FoundationNetworking)
        let (seconds, attoseconds) = requested.components
        return .seconds(max(1, attoseconds > 0 ? seconds + 1 : seconds))
        #else
        return requested
        #endif
    }

    /// The `URLRequest` for `request`: method, URL, body, idle timeout and exactly its headers
    /// (repeated names are joined with `,` by `addValue`).
    static func urlRequest(for request: HTTPRequest, timeout: Duration) -> URLRequest {
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData)
        // Set through the property, not the initializer: FoundationNetworking only honours a
        // request's own timeout when the property setter has run (`isTimeoutIntervalSet`);
        // otherwise the session's `timeoutIntervalForRequest` applies.
        urlRequest.timeoutInterval = timeout.timeInterval
        urlRequest.httpMethod = request.method.rawValue
        for field in request.headers {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
        }
        urlRequest.httpBody = request.body
        return urlRequest
    }

    /// The response's header fields, one per name, sorted by lowercased name (URLSession keeps
    /// no order). Entries whose key or value is not a string are skipped.
    static func headers(of response: HTTPURLResponse) -> HTTPHeaders {
        var fields: [HTTPHeaders.Field] = []
        for (key, value) in response.allHeaderFields {
            guard let name = key.base as? String, let value = value as? String else { continue }
            fields.append(HTTPHeaders.Field(name: name, value: value))
        }
        fields.sort { (FieldSyntax.asciiLowercased($0.name), $0.name) < (FieldSyntax.asciiLowercased($1.name), $1.name) }
        return HTTPHeaders(fields)
    }
}
