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
/// What the platform still does, and the caller should know:
/// - Redirects are followed (URLSession's default); ``HTTPResponse/url`` is the final URL.
///   The follow-up goes to the `Location` resolved per RFC 3986 §5, which works around a
///   FoundationNetworking bug with relative `Location`s that end in `/` (see
///   `RedirectDelegate`). Too many redirects throw ``TransportError/badResponse``.
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

    /// A transport with its own `URLSession` built from `configuration`.
    ///
    /// Preconditions (programmer errors): `configuration.timeout` is greater than zero and
    /// `configuration.maximumConnectionsPerHost` is at least 1.
    public init(configuration: Configuration = Configuration()) {
        precondition(configuration.timeout > .zero, "URLSessionTransport needs a timeout greater than zero, got \(configuration.timeout)")
        precondition(configuration.maximumConnectionsPerHost >= 1, "URLSessionTransport needs maximumConnectionsPerHost >= 1, got \(configuration.maximumConnectionsPerHost)")
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
        session = URLSession(configuration: sessionConfiguration, delegate: RedirectDelegate(), delegateQueue: nil)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Sends `request` and returns the complete response, whatever its status.
    ///
    /// ``HTTPResponse/duration`` runs from just before the request is handed to URLSession to
    /// the end of the body, on `ContinuousClock`.
    ///
    /// Precondition: `request.timeout`, when set, is greater than zero. On Linux it is rounded
    /// up to whole seconds (see ``Configuration/timeout``).
    ///
    /// - Throws: ``TransportError`` when no complete HTTP response arrived:
    ///   ``TransportError/cancelled`` when the calling task is cancelled before or during the
    ///   request; otherwise the mapping of the `URLError` listed on ``TransportError/Code``;
    ///   ``TransportError/badResponse`` when the response is not an HTTP response.
    public func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        let requestedTimeout = request.timeout ?? configuration.timeout
        precondition(requestedTimeout > .zero, "HTTPRequest.timeout must be greater than zero, got \(requestedTimeout)")
        let timeout = Self.effectiveTimeout(requestedTimeout)
        guard !Task.isCancelled else { throw .requestCancelled(request) }

        let urlRequest = Self.urlRequest(for: request, timeout: timeout)
        let clock = ContinuousClock()
        let start = clock.now
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: urlRequest)
        } catch {
            throw TransportError(mapping: error, request: request, timeout: timeout, taskIsCancelled: Task.isCancelled)
        }
        let duration = start.duration(to: clock.now)

        guard let httpResponse = response as? HTTPURLResponse else {
            throw TransportError(code: .badResponse, message: "not an HTTP response from \(TransportError.endpoint(of: request.url))", request: request)
        }
        return HTTPResponse(
            status: httpResponse.statusCode,
            headers: Self.headers(of: httpResponse),
            body: data,
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
