import Foundation

extension HTTPTransport {
    /// Sends `request` and follows redirects by `policy`'s rules, keeping bound headers (the
    /// credentials) to the policy's origin.
    ///
    /// ```swift
    /// let policy = RedirectPolicy(origin: Origin(baseURL), boundHeaderNames: ["X-Api-Key"])
    /// let answer = try await transport.send(request, following: policy)
    /// if let refusal = answer.refusal { print(refusal) }   // a 307 POST to another origin …
    /// ```
    ///
    /// The rules are listed on ``RedirectPolicy``. The first request, too, is sent without the
    /// bound headers when its URL is not in the policy's origin. The request's
    /// ``HTTPRequest/deadline`` covers the whole chain: each hop gets what is left of it
    /// (measured on `ContinuousClock`).
    ///
    /// - Returns: the last response, the URLs followed and, for an unfollowed redirect, why.
    /// - Throws: what ``send(_:)`` throws for any hop; ``TransportError/badResponse`` after
    ///   more than ``RedirectPolicy/maxRedirects`` redirects; ``TransportError/deadlineExceeded``
    ///   when the deadline is used up between hops.
    public func send(_ request: HTTPRequest, following policy: RedirectPolicy) async throws(TransportError) -> RedirectedResponse {
        let origin = policy.origin ?? Origin(request.url)
        var current = request
        var leftOrigin = false
        var redirects: [URL] = []
        let clock = ContinuousClock()
        let start = clock.now
        while true {
            if origin.map({ !$0.contains(current.url) }) ?? true { leftOrigin = true }
            if leftOrigin { current.headers = Self.removing(policy.boundHeaderNames, from: current.headers) }
            if let deadline = request.deadline {
                let left = deadline - start.duration(to: clock.now)
                guard left > .zero else {
                    throw TransportError(code: .deadlineExceeded, message: "no complete response from \(TransportError.endpoint(of: request.url)) within the \(deadline.shortDescription) deadline (\(redirects.count) redirects)", request: current)
                }
                current.deadline = left
            }
            let response = try await send(current)
            guard [301, 302, 303, 307, 308].contains(response.status) else {
                return RedirectedResponse(response: response, redirects: redirects, leftOrigin: leftOrigin)
            }
            let method = current.method
            let safe = method == .get || method == .head
            guard let target = Self.redirectTarget(location: response.headers["Location"], responseURL: response.url) else {
                let refusal = RedirectRefusal(reason: .unusableLocation, status: response.status, location: nil,
                                              message: "\(method) \(TransportError.endpoint(of: current.url)) answered \(response.status) without a usable http(s) Location")
                return RedirectedResponse(response: response, redirects: redirects, refusal: refusal, leftOrigin: leftOrigin)
            }
            if !safe {
                if response.status == 301 || response.status == 302 || response.status == 303 {
                    let refusal = RedirectRefusal(reason: .methodChange, status: response.status, location: target,
                                                  message: "a \(method) answered \(response.status) is not re-sent as a GET to \(Origin(target).map(String.init(describing:)) ?? "its Location")")
                    return RedirectedResponse(response: response, redirects: redirects, refusal: refusal, leftOrigin: leftOrigin)
                }
                if leftOrigin || origin.map({ !$0.contains(target) }) ?? true {
                    let refusal = RedirectRefusal(reason: .crossOriginUnsafeMethod, status: response.status, location: target,
                                                  message: "a \(method) redirected (\(response.status)) to another origin, \(Origin(target).map(String.init(describing:)) ?? "?"), is not followed")
                    return RedirectedResponse(response: response, redirects: redirects, refusal: refusal, leftOrigin: leftOrigin)
                }
            }
            guard redirects.count < policy.maxRedirects else {
                throw TransportError(code: .badResponse, message: "more than \(policy.maxRedirects) redirects from \(TransportError.endpoint(of: request.url))", request: request)
            }
            redirects.append(target)
            // GET stays GET and HEAD stays HEAD (RFC 9110 §15.4.4 for 303); 307/308 keep the
            // method, headers and body of the request they answer.
            current.url = target
        }
    }

    /// The absolute URL a redirect's `Location` value points to, resolved against the URL of
    /// the redirecting response (RFC 3986 §5, RFC 9110 §10.2.2), without userinfo; nil when
    /// either is missing, the value is not a URI reference, or the result is not http(s).
    ///
    /// Resolved here rather than by FoundationNetworking, which drops a trailing slash from a
    /// relative `Location` (`/pokemon` answered `301 Location: /pokemon/` loops).
    public static func redirectTarget(location: String?, responseURL: URL?) -> URL? {
        guard let location, let responseURL else { return nil }
        let trimmed = FieldSyntax.trimmingWhitespace(location[...])
        guard !trimmed.isEmpty, let resolved = URL(string: String(trimmed), relativeTo: responseURL)?.absoluteURL,
              Origin(resolved) != nil, var components = URLComponents(url: resolved, resolvingAgainstBaseURL: false)
        else { return nil }
        if components.user != nil || components.password != nil {
            components.user = nil
            components.password = nil
        }
        return components.url
    }

    /// `headers` without the fields named in `names` (lowercase).
    static func removing(_ names: Set<String>, from headers: HTTPHeaders) -> HTTPHeaders {
        HTTPHeaders(headers.fields.filter { !names.contains(FieldSyntax.asciiLowercased($0.name)) })
    }
}
