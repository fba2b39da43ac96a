import Foundation
import FreshetHTTP

/// Where credentials may go and how URLs are stored: the store's one way to send a request.
///
/// The rules (docs/security.md):
/// - `Authorization` (from ``Configuration/authentication``), ``Configuration/defaultHeaders``,
///   `Cookie`, `Proxy-Authorization` and `Idempotency-Key` are bound to the credential origin:
///   the origin (scheme, host, port) of ``Configuration/baseURL``, or, without a base URL, the
///   origin of the request the store was asked to make. They are never sent anywhere else.
/// - Redirects are followed by the store, not the platform (``HTTPTransport/send(_:following:)``),
///   at most ``Configuration/maxRedirects`` of them. A `GET` redirected to another origin is
///   followed without those headers, as browsers do. A mutation is never sent to another origin
///   and a 301/302/303 never turns it into a `GET`: the redirect is the server's answer and
///   rejects the mutation (rolled back, with the reason).
/// - URLs are stored and printed through ``Configuration/urlRedaction``: no userinfo, secret query
///   values replaced by `REDACTED`.
extension Store {
    /// `url` as it may be stored or printed: without userinfo, secret query values `REDACTED`.
    func logged(_ url: URL) -> String {
        urlRedaction.string(for: url)
    }

    /// The origin credentials and default headers are bound to for a request first sent to `url`.
    func credentialOrigin(for url: URL) -> Origin? {
        configuration.baseURL.flatMap(Origin.init) ?? Origin(url)
    }

    /// The redirect rules for a request first sent to `url`.
    func redirectPolicy(for url: URL) -> RedirectPolicy {
        RedirectPolicy(origin: credentialOrigin(for: url), boundHeaderNames: Set(configuration.defaultHeaders.keys),
                       maxRedirects: configuration.maxRedirects)
    }

    /// Sends `request` with the store's limits (``Configuration/requestDeadline``,
    /// ``Configuration/maxResponseBytes``), following redirects by ``redirectPolicy(for:)``.
    /// Every request the store makes goes through here.
    ///
    /// - Throws: what ``HTTPTransport/send(_:following:)`` throws; also
    ///   ``TransportError/responseTooLarge`` when a transport that does not enforce the limit
    ///   returned a larger body.
    func exchange(_ request: HTTPRequest) async throws(TransportError) -> RedirectedResponse {
        var request = request
        request.deadline = configuration.requestDeadline
        request.maximumResponseBytes = configuration.maxResponseBytes
        let answer = try await dependencies.transport.send(request, following: redirectPolicy(for: request.url))
        guard answer.response.body.count <= configuration.maxResponseBytes else {
            throw TransportError(code: .responseTooLarge, message: "response from \(Origin(answer.response.url).map(String.init(describing:)) ?? "the server") is larger than the limit of \(configuration.maxResponseBytes) bytes",
                                 request: request)
        }
        return answer
    }

    /// Why a `next` page may not be fetched, or nil when it may: it must have the origin of
    /// the refresh's first request (`home`), so one collection never mixes two servers' rows
    /// and no credential goes to a server the app did not name.
    func pagingRefusal(next: URL, home: URL) -> String? {
        guard let origin = Origin(home), !origin.contains(next) else { return nil }
        let other = Origin(next).map(String.init(describing:)) ?? logged(next)
        return "the next page is on another origin (\(other), not \(origin)); paging stops there"
    }

    /// Why a mutation may not be stored as it is, or nil: a credential in its path (userinfo or
    /// a secret query parameter) or in its headers (`Authorization`, `Proxy-Authorization`,
    /// `Cookie`) would be written to the log in plain text. Credentials come from
    /// ``Configuration/authentication`` and ``Configuration/defaultHeaders``, which are never stored.
    /// Header names (lowercase) that carry credentials: HTTP's own (RFC 9110 §11.6.2, §11.7.2;
    /// RFC 6265 `Cookie`) and the API-key headers services commonly use.
    static let credentialHeaderNames: Set<String> = ["authorization", "proxy-authorization", "cookie", "x-api-key", "api-key", "x-auth-token", "x-access-token"]

    func credentialInMutation(_ request: Mutation.Request) -> String? {
        if urlRedaction.hasSecret(request.path) {
            return "its path \(urlRedaction.redact(request.path).debugDescription) holds a credential (userinfo or a secret query parameter), which would be stored in the log"
        }
        let secretHeaders = request.headers.keys.filter { Self.credentialHeaderNames.contains($0.lowercased()) }.sorted()
        if !secretHeaders.isEmpty {
            return "its headers hold \(secretHeaders.joined(separator: ", ")), which would be stored in the log; use Configuration.authentication or defaultHeaders"
        }
        return nil
    }
}

extension RedirectedResponse {
    /// The last response and, when it is a redirect that was not followed, why.
    var unfollowed: (HTTPResponse, RedirectRefusal?) { (response, refusal) }
}
