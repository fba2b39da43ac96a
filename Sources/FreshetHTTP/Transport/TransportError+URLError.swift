import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TransportError {
    /// Maps whatever `URLSession` threw for `request` to a `TransportError`.
    ///
    /// When the calling task was cancelled the result is ``Code/cancelled`` whatever the
    /// underlying error says, because that is what the caller caused. A `URLError` is mapped by
    /// ``init(_:request:timeout:)``; a `CancellationError` becomes ``Code/cancelled``; anything
    /// else becomes ``Code/other`` with its description as the message.
    init(mapping error: any Error, request: HTTPRequest, timeout: Duration, taskIsCancelled: Bool) {
        if taskIsCancelled || error is CancellationError {
            self = .requestCancelled(request)
        } else if let urlError = error as? URLError {
            self.init(urlError, request: request, timeout: timeout)
        } else {
            self.init(code: .other, message: "request failed: \(error)", request: request)
        }
    }

    /// Maps a `URLError` for `request` (sent with an idle `timeout`) to a code and a message
    /// naming the host and port. The table is on ``TransportError/Code``.
    init(_ error: URLError, request: HTTPRequest, timeout: Duration) {
        let endpoint = Self.endpoint(of: error.failingURL ?? request.url)
        let code: Code
        let message: String
        switch error.code {
        case .cancelled:
            self = .requestCancelled(request)
            return
        case .timedOut:
            code = .timedOut
            message = "timed out after \(timeout.shortDescription) waiting for \(endpoint)"
        case .cannotConnectToHost:
            code = .cannotConnect
            message = "cannot connect to \(endpoint): connection refused or host unreachable"
        case .cannotFindHost, .dnsLookupFailed:
            code = .cannotConnect
            message = "cannot find host \(endpoint): DNS lookup failed"
        case .notConnectedToInternet, .internationalRoamingOff, .dataNotAllowed, .callIsActive:
            code = .cannotConnect
            message = "cannot connect to \(endpoint): not connected to a network"
        case .networkConnectionLost:
            code = .connectionLost
            message = "connection to \(endpoint) lost before the response was complete"
        case .badServerResponse, .cannotParseResponse, .zeroByteResource:
            code = .badResponse
            message = "bad response from \(endpoint)"
        case .cannotDecodeRawData, .cannotDecodeContentData:
            code = .badResponse
            message = "cannot decode the response content from \(endpoint)"
        case .httpTooManyRedirects, .redirectToNonExistentLocation:
            code = .badResponse
            message = "bad redirect from \(endpoint)"
        case .dataLengthExceedsMaximum:
            code = .badResponse
            message = "response from \(endpoint) is too large"
        default:
            code = .other
            message = "URL error \(error.code.rawValue) talking to \(endpoint): \(error.localizedDescription)"
        }
        self.init(code: code, message: message, request: request)
    }

    /// ``Code/cancelled`` for `request`.
    static func requestCancelled(_ request: HTTPRequest) -> TransportError {
        TransportError(code: .cancelled, message: "request cancelled", request: request)
    }

    /// `host:port` for messages, with the scheme's default port when the URL has none
    /// (`pokeapi.co:443`), IPv6 hosts in brackets, or the whole URL when it has no host.
    static func endpoint(of url: URL) -> String {
        guard let host = url.host(percentEncoded: false), !host.isEmpty else { return url.absoluteString }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let port: Int? = url.port ?? {
            switch url.scheme.map(FieldSyntax.asciiLowercased) {
            case "http": 80
            case "https": 443
            default: nil
            }
        }()
        return port.map { "\(shownHost):\($0)" } ?? shownHost
    }
}
