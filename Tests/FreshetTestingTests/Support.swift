import Foundation
import FreshetHTTP
import Synchronization
import Testing

/// A list that tasks append to, to see in which order things happened.
final class EventLog<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])

    func append(_ item: Element) {
        items.withLock { $0.append(item) }
    }

    var all: [Element] {
        items.withLock { $0 }
    }
}

/// A request for `https://api.test` + `target`, e.g. `"/items?limit=2"`.
func request(_ target: String, method: HTTPMethod = .get) throws -> HTTPRequest {
    HTTPRequest(method: method, url: try #require(URL(string: "https://api.test" + target)))
}

/// The body of `response` as UTF-8 text.
func text(_ response: HTTPResponse) -> String {
    String(decoding: response.body, as: UTF8.self)
}

/// The code of the `TransportError` that sending `request` throws, or `nil` when it succeeds.
func failure(_ transport: some HTTPTransport, _ request: HTTPRequest) async -> TransportError.Code? {
    do {
        _ = try await transport.send(request)
        return nil
    } catch {
        return error.code
    }
}
