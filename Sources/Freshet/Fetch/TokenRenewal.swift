import Synchronization

/// Token renewal as a single flight: one renewal at a time, shared by every request that got
/// a 401 while it runs — refreshes and mutations alike. With rotating refresh tokens (RFC 6749
/// §6, OAuth 2.0 Security BCP §4.14.2) a second, concurrent renewal would spend a refresh
/// token the first one already used, fail, and sign the user out.
///
/// It also remembers the newest `Authorization` value handed out and how many renewals had
/// completed when it was read, so a request rejected with an older token is sent again with
/// the current one and renews nothing.
final class TokenRenewal: Sendable {
    private struct State: Sendable {
        /// Renewals completed (that did not throw) since the store was opened.
        var renewals = 0
        /// The renewal running now.
        var inFlight: Task<Void, any Error>?
        /// The newest `Authorization` value handed out (nil: no token), and ``renewals`` when
        /// it was read from the token provider.
        var issued: (authorization: String?, renewals: Int)?
        /// Callers that found a renewal in flight and waited for it, since the store was opened.
        var joined = 0
    }

    private let state = Mutex(State())

    /// Renewals completed so far: read it before asking the token provider for a token.
    var renewals: Int {
        state.withLock { $0.renewals }
    }

    /// How many 401s found a renewal in flight and waited for it instead of starting one
    /// (for tests and diagnostics).
    var joinedCount: Int {
        state.withLock { $0.joined }
    }

    /// Notes that requests now carry `authorization`, read from the token provider when
    /// ``renewals`` was `count`. A value read before a later renewal never replaces a newer one.
    func issued(_ authorization: String?, at count: Int) {
        state.withLock { s in
            if let issued = s.issued, issued.renewals > count { return }
            s.issued = (authorization, count)
        }
    }

    /// After a 401 to a request that carried `sent`: waits for the renewal in flight, or
    /// starts `renew` when `sent` is the newest value handed out and no renewal completed
    /// since it was read. Returns at once when a newer token exists already (a request
    /// made now carries another value, or a renewal completed since).
    ///
    /// The renewal runs in a task of its own: a caller that is cancelled does not cancel it
    /// for the others.
    /// - Throws: what `renew` threw, to every caller that waited for that renewal.
    func renew(after sent: String?, _ renew: @escaping @Sendable () async throws -> Void) async throws {
        let task = state.withLock { s -> Task<Void, any Error>? in
            if let running = s.inFlight {
                s.joined += 1
                return running
            }
            if let issued = s.issued, issued.authorization != sent || issued.renewals != s.renewals { return nil }
            let started = Task {
                do {
                    try await renew()
                } catch {
                    self.finish(renewed: false)
                    throw error
                }
                self.finish(renewed: true)
            }
            s.inFlight = started
            return started
        }
        guard let task else { return }
        try await task.value
    }

    /// Ends the renewal in flight; 401s from now on compare against the new count.
    private func finish(renewed: Bool) {
        state.withLock { s in
            if renewed { s.renewals += 1 }
            s.inFlight = nil
        }
    }
}
