import Foundation
import FreshetHTTP
import Synchronization

/// An in-test `HTTPTransport` that answers from a closure and remembers every request.
final class StubTransport: HTTPTransport {
    typealias Responder = @Sendable (HTTPRequest) async throws(TransportError) -> HTTPResponse

    private let respond: Responder
    private let sent = Mutex<[HTTPRequest]>([])

    init(_ respond: @escaping Responder) {
        self.respond = respond
    }

    /// Every request sent so far, in order.
    var requests: [HTTPRequest] { sent.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        sent.withLock { $0.append(request) }
        return try await respond(request)
    }

    /// Answers every request with `body` and `status`.
    static func answering(_ body: String, status: Int = 200, headers: HTTPHeaders = ["Content-Type": "application/json"]) -> StubTransport {
        StubTransport { request in
            HTTPResponse(status: status, headers: headers, body: Data(body.utf8), url: request.url)
        }
    }

    /// Fails every request with a `TransportError` of `code`.
    static func failing(_ code: TransportError.Code) -> StubTransport {
        StubTransport { request throws(TransportError) in
            throw TransportError(code: code, message: "stub \(code)", request: request)
        }
    }

    /// A transport for tests that never reach the network: every request is refused.
    static var offline: StubTransport { failing(.cannotConnect) }
}
