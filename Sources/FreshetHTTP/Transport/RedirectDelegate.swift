import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The session delegate of ``URLSessionTransport``: it lets URLSession follow redirects as
/// usual, but sends the follow-up request to the `Location` resolved by RFC 3986 §5 against
/// the response URL (RFC 9110 §10.2.2).
///
/// Why: FoundationNetworking (Linux, observed with Swift 6.3) drops a trailing slash when it
/// resolves a relative `Location`: `/pokemon` answered with `301 Location: /pokemon/` is
/// retried as `/pokemon` until it fails with too many redirects, and `Location: d/` is taken
/// as `/d`. On Apple platforms the resolved URL is the one URLSession already chose. Only the
/// URL is replaced; the method, headers and body URLSession prepared for the follow-up are kept.
/// A per-task delegate (`data(for:delegate:)`) is not consulted for redirects on Linux, hence
/// a session delegate.
final class RedirectDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        var followUp = request
        if let target = Self.target(location: response.value(forHTTPHeaderField: "Location"), responseURL: response.url) {
            followUp.url = target
        }
        completionHandler(followUp)
    }

    /// The absolute URL a redirect's `Location` value points to, resolved against the URL of
    /// the redirecting response; `nil` when either is missing or the value is not a URI
    /// reference.
    static func target(location: String?, responseURL: URL?) -> URL? {
        guard let location, let responseURL else { return nil }
        let trimmed = FieldSyntax.trimmingWhitespace(location[...])
        guard !trimmed.isEmpty else { return nil }
        return URL(string: String(trimmed), relativeTo: responseURL)?.absoluteURL
    }
}
