import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The session delegate of ``URLSessionTransport``: it collects each data task's body as it
/// arrives, enforcing the request's size limit while it streams, and never lets URLSession
/// follow a redirect (the 3xx response is returned; see ``HTTPTransport/send(_:following:)``
/// for why redirects are followed above the transport).
///
/// One delegate serves the whole session; exchanges are kept per task identifier. A session
/// delegate, not a per-task one: FoundationNetworking does not consult per-task delegates.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    /// How one task ended.
    struct Completion: Sendable {
        var response: URLResponse?
        var body: Data
        var error: (any Error)?
        /// The body passed the limit (or `Content-Length` announced more); the task was cancelled.
        var tooLarge: Bool
        /// The overall deadline passed; the task was cancelled.
        var expired: Bool
    }

    private struct Exchange {
        var continuation: CheckedContinuation<Completion, Never>?
        var completion: Completion?
        var limit: Int
        var body = Data()
        var response: URLResponse?
        var tooLarge = false
        var expired = false

        /// How many more body bytes fit, or -1 once the limit was passed.
        var room: Int { tooLarge ? -1 : limit - body.count }
    }

    private let exchanges = Mutex<[Int: Exchange]>([:])

    /// Starts tracking `task` (not yet resumed); its body is limited to `limit` bytes. Call
    /// before anything can cancel the task, so even a completion that comes first is kept.
    func register(_ task: URLSessionDataTask, limit: Int) {
        exchanges.withLock { $0[task.taskIdentifier] = Exchange(limit: limit) }
    }

    /// Resumes a registered `task` and waits for it to complete.
    func run(_ task: URLSessionDataTask) async -> Completion {
        await withCheckedContinuation { continuation in
            let finished = exchanges.withLock { exchanges -> Completion? in
                if let completion = exchanges[task.taskIdentifier]?.completion {
                    exchanges[task.taskIdentifier] = nil
                    return completion
                }
                exchanges[task.taskIdentifier]?.continuation = continuation
                return nil
            }
            if let finished {
                continuation.resume(returning: finished)
            } else {
                task.resume()
            }
        }
    }

    /// Marks the task's exchange as past its deadline; the caller then cancels the task.
    func expire(_ task: URLSessionTask) {
        exchanges.withLock { $0[task.taskIdentifier]?.expired = true }
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // Never follow: the 3xx response is the answer.
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let allowed = exchanges.withLock { exchanges -> Bool in
            guard var exchange = exchanges[dataTask.taskIdentifier] else { return true }
            exchange.response = response
            // Content-Length announces the size (-1 when unknown): refuse before reading.
            if response.expectedContentLength > Int64(exchange.limit) { exchange.tooLarge = true }
            exchanges[dataTask.taskIdentifier] = exchange
            return !exchange.tooLarge
        }
        completionHandler(allowed ? .allow : .cancel)
        if !allowed { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let overLimit = exchanges.withLock { exchanges -> Bool in
            let id = dataTask.taskIdentifier
            // Only scalars are read: a binding to the exchange would share the body's buffer,
            // and the append below would copy the whole body each time.
            guard let room = exchanges[id]?.room, room >= 0 else { return false }
            if data.count > room {
                // Stop buffering here: the rest is never kept.
                exchanges[id]?.tooLarge = true
                return true
            }
            // Appended in place (through the dictionary's accessor): a copy of the exchange
            // would make every append copy the whole body so far.
            exchanges[id]?.body.append(data)
            return false
        }
        if overLimit { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let waiting = exchanges.withLock { exchanges -> (CheckedContinuation<Completion, Never>, Completion)? in
            guard var exchange = exchanges[task.taskIdentifier] else { return nil }
            let completion = Completion(response: exchange.response ?? task.response, body: exchange.body, error: error,
                                        tooLarge: exchange.tooLarge, expired: exchange.expired)
            guard let continuation = exchange.continuation else {
                // Completed (cancelled) before `run` waited: keep it for `run`.
                exchange.completion = completion
                exchanges[task.taskIdentifier] = exchange
                return nil
            }
            exchanges[task.taskIdentifier] = nil
            return (continuation, completion)
        }
        if let (continuation, completion) = waiting { continuation.resume(returning: completion) }
    }
}
