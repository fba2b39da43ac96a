import Foundation
import FreshetHTTP
import Synchronization

/// An ``EventStreamTransport`` that answers connection attempts from a script, in order,
/// and records every request. When the script is used up, attempts fail with `cannotConnect`.
final class ScriptedEventStreams: EventStreamTransport {
    enum Reply: Sendable {
        /// A 200 `text/event-stream` whose body is these chunks, then ends.
        case stream([String], then: End = .close)
        /// This status, `Content-Type` and other headers, empty body.
        case status(Int, contentType: String = "application/json", headers: [String: String] = [:])
        /// No response: the attempt fails with this transport error.
        case fail(TransportError.Code)
    }

    enum End: Sendable {
        /// The server ends the response.
        case close
        /// The connection fails with this transport error.
        case fail(TransportError.Code)
        /// The server never ends the response (it stays open until the reader is cancelled).
        case open
    }

    private let script: Mutex<[Reply]>
    private let recorded = Mutex<[HTTPRequest]>([])

    init(_ replies: [Reply]) {
        script = Mutex(replies)
    }

    /// The requests received, in order.
    var requests: [HTTPRequest] { recorded.withLock { $0 } }

    /// The `Last-Event-ID` of each request, nil when it had none.
    var lastEventIDs: [String?] { requests.map { $0.headers["Last-Event-ID"] } }

    func open(_ request: HTTPRequest) async throws(TransportError) -> EventStreamResponse {
        recorded.withLock { $0.append(request) }
        let reply = script.withLock { $0.isEmpty ? Reply.fail(.cannotConnect) : $0.removeFirst() }
        switch reply {
        case .fail(let code):
            throw TransportError(code: code, message: "scripted \(code)", request: request)
        case .status(let status, let contentType, let extra):
            var headers = HTTPHeaders()
            headers.set(name: "Content-Type", value: contentType)
            for (name, value) in extra.sorted(by: { $0.key < $1.key }) { headers.set(name: name, value: value) }
            return EventStreamResponse(status: status, headers: headers, url: request.url, body: AsyncThrowingStream { $0.finish() })
        case .stream(let chunks, let end):
            var headers = HTTPHeaders()
            headers.set(name: "Content-Type", value: "text/event-stream; charset=utf-8")
            let body = AsyncThrowingStream<Data, any Error> { continuation in
                for chunk in chunks { continuation.yield(Data(chunk.utf8)) }
                switch end {
                case .close: continuation.finish()
                case .fail(let code): continuation.finish(throwing: TransportError(code: code, message: "scripted \(code)", request: request))
                case .open: break
                }
            }
            return EventStreamResponse(status: 200, headers: headers, url: request.url, body: body)
        }
    }
}

/// One `change` event as the fixture server writes it.
func changeEvent(id: String?, _ data: String, type: String = "change") -> String {
    (id.map { "id: \($0)\n" } ?? "") + "event: \(type)\ndata: \(data)\n\n"
}

/// An upsert change message of todos.
func upsertTodos(_ todos: [(Int, String)], collection: String = "todos") -> String {
    #"{"collection":"\#(collection)","op":"upsert","rows":\#(todosJSON(todos))}"#
}
