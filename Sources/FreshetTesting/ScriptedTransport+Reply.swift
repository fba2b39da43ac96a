import Foundation
import FreshetHTTP

extension ScriptedTransport {
    /// What the scripted server does with one request.
    ///
    /// ```swift
    /// transport.on("/items",
    ///               reply: .fail(.cannotConnect),                       // 1st request
    ///                      .status(503, headers: ["Retry-After": "2"]),  // 2nd
    ///                      .json(#"[{"id": "1"}]"#))                     // 3rd and later
    /// ```
    ///
    /// Every response carries the request's URL as `url` and a `duration` of zero.
    public indirect enum Reply: Sendable {
        /// A response with status code `status` (e.g. 200, 304, 503), `headers` as given and
        /// `body` as the content (empty by default).
        case status(Int, headers: HTTPHeaders = [:], body: Data = Data())
        /// A response whose content is `json` in UTF-8, with status code `status` (200 by
        /// default) and `headers`, plus `Content-Type: application/json` unless `headers`
        /// already has a `Content-Type`. The text is not validated, so malformed JSON can be
        /// scripted on purpose.
        case json(String, status: Int = 200, headers: HTTPHeaders = [:])
        /// No response: the request throws `TransportError(code: code, message: message)`
        /// naming the request, e.g. `.fail(.timedOut)` or `.fail(.cannotConnect)`.
        case fail(TransportError.Code, message: String = "scripted failure")
        /// Waits at `gate` until the test releases it, then replies with `then`. When the
        /// requesting task is cancelled while waiting, the request throws
        /// `TransportError.cancelled`.
        case held(Gate, then: Reply)
    }
}
