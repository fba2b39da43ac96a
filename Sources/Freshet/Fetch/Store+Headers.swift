import FreshetHTTP

extension Store {
    /// The headers every request starts with: ``Configuration/defaultHeaders``, sorted by name.
    func defaultHeaders() -> HTTPHeaders {
        var headers = HTTPHeaders()
        for (name, value) in configuration.defaultHeaders.sorted(by: { $0.key < $1.key }) { headers.set(name: name, value: value) }
        return headers
    }

    /// Sets `Authorization: Bearer …` from ``Configuration/authentication``'s token provider
    /// (nothing when there is no authentication or no token). Tokens never reach the log.
    /// - Throws: what the token provider throws.
    func authorize(_ headers: inout HTTPHeaders) async throws {
        guard let auth = configuration.authentication else { return }
        let renewals = tokenRenewal.renewals
        let authorization = try await auth.token().map { "Bearer \($0)" }
        tokenRenewal.issued(authorization, at: renewals)
        if let authorization { headers.set(name: "Authorization", value: authorization) }
    }

    /// After a 401 to `request`, makes sure the token provider has a token newer than the one
    /// `request` carried, so that sending it again (with ``authorize(_:)``) uses a new token:
    /// when a newer one was handed out already (another request renewed it), nothing is
    /// renewed; when a renewal is running, it waits for that one; otherwise it renews — once
    /// for all concurrent 401s (see ``TokenRenewal``). Does nothing without
    /// ``Configuration/authentication``.
    /// - Throws: what the token provider's `refresh` throws.
    func renewToken(after request: HTTPRequest) async throws {
        guard let auth = configuration.authentication else { return }
        try await tokenRenewal.renew(after: request.headers["Authorization"], auth.refresh)
    }
}
