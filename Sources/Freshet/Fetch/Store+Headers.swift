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
        guard let auth = configuration.authentication, let token = try await auth.token() else { return }
        headers.set(name: "Authorization", value: "Bearer \(token)")
    }
}
