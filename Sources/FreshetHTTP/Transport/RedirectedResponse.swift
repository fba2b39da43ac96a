import Foundation

/// What ``HTTPTransport/send(_:following:)`` returns: the last response and the path to it.
public struct RedirectedResponse: Sendable, Hashable {
    /// The last response: the answer, or a 3xx that was not followed (then ``refusal`` says
    /// why, unless it was a 3xx that is not a redirect).
    public var response: HTTPResponse
    /// The URLs redirected to, in order; empty when the first response was the answer.
    public var redirects: [URL]
    /// Why the last response, a redirect, was not followed; nil when it was not a redirect.
    public var refusal: RedirectRefusal?
    /// Whether some hop went to another origin than the policy's (and so was sent without the
    /// bound headers).
    public var leftOrigin: Bool

    public init(response: HTTPResponse, redirects: [URL] = [], refusal: RedirectRefusal? = nil, leftOrigin: Bool = false) {
        self.response = response
        self.redirects = redirects
        self.refusal = refusal
        self.leftOrigin = leftOrigin
    }
}
