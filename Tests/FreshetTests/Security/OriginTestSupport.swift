import Foundation
import FreshetHTTP
import Testing
@testable import Freshet

/// The bearer token and API key the origin tests configure; neither may reach another origin.
let originToken = "tok-ORIGIN-SECRET"
let originAPIKey = "key-ORIGIN-SECRET"

/// Two fixture servers on loopback: `home` is the configured origin (`Configuration.baseURL`),
/// `other` is another origin (another port). A store with a bearer token and an API key in its
/// default headers fetches from `home` with the live transport.
func withTwoOrigins<R>(
    configure: (inout Configuration) -> Void = { _ in },
    _ body: (_ home: FixtureServer, _ other: FixtureServer, _ store: Store) async throws -> R
) async throws -> R {
    try await FixtureServer.withRunning { home in
        try await FixtureServer.withRunning { other in
            var configuration = Configuration.test(baseURL: home.baseURL, freshness: .always)
            configuration.defaultHeaders = ["Accept": "application/json", "X-Api-Key": originAPIKey]
            configuration.authentication = .init(token: { originToken }, refresh: {})
            configuration.retry = .init(maxAttempts: 1)
            configure(&configuration)
            let dependencies = Dependencies.test(transport: URLSessionTransport())
            return try await withTemporaryStore(configuration: configuration, dependencies: dependencies) { store in
                try await body(home, other, store)
            }
        }
    }
}

/// A path on `server` with its query percent-encoded, for `to=` and `next=` parameters.
func absolute(_ server: FixtureServer, _ path: String) -> String {
    server.baseURL.absoluteString + path
}

/// `/test/redirect?status=…&to=…` as a path with an encoded query.
func redirectPath(status: Int, to target: String) -> String {
    var components = URLComponents()
    components.path = "/test/redirect"
    components.queryItems = [URLQueryItem(name: "status", value: String(status)), URLQueryItem(name: "to", value: target)]
    // `+`, `&`, `=`, `:` and `/` inside the value must survive as data.
    components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
    return components.string ?? ""
}

/// The header names libcurl sends on its own (the platform's, not Freshet's), lowercased.
let platformHeaderNames: Set<String> = ["host", "user-agent", "accept", "accept-encoding", "accept-language", "connection", "content-length", "content-type"]

extension Store {
    /// The `fetchFailed` events of `collection`, in order.
    func fetchFailures(_ collection: String) throws -> [Event.FetchFailed] {
        try allRecords(collection: collection).compactMap {
            if case .fetchFailed(let failure) = $0.event { return failure }
            return nil
        }
    }
}
