import Foundation
import ProcessSupport
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The fixture API server (tools/fixture-server/fixture_server.py) as a child process of a
/// test: real PokeAPI data on a free loopback port, a control port to inject failures, and
/// the log of the requests it served.
final class FixtureServer {
    /// One request the API port served, from `GET /requests` on the control port.
    struct LoggedRequest: Decodable, Equatable {
        let method: String
        /// The request target: path and query, as sent.
        let path: String
        let status: Int
        let if_none_match: String?
        let if_modified_since: String?
        /// Every header line as received, `[name, value]`, in order.
        let headers: [[String]]?
        /// The request body as text.
        let body: String?

        /// The names of the headers received, lowercased and sorted.
        var headerNames: [String] { (headers ?? []).compactMap { $0.first?.lowercased() }.sorted() }

        /// The value of the header `name` (any case), if it was received.
        func header(_ name: String) -> String? {
            (headers ?? []).first { $0.first?.lowercased() == name.lowercased() }.flatMap { $0.count > 1 ? $0[1] : nil }
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// `http://127.0.0.1:PORT`.
    let baseURL: URL
    let controlURL: URL
    private let process: SpawnedProcess
    private let stderrLog: URL
    private let session = URLSession(configuration: .ephemeral)

    /// The repository root, found from this file's path.
    static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent() // Support
        .deletingLastPathComponent() // FreshetTests
        .deletingLastPathComponent() // Tests
        .deletingLastPathComponent()

    private init(baseURL: URL, controlURL: URL, process: SpawnedProcess, stderrLog: URL) {
        self.baseURL = baseURL
        self.controlURL = controlURL
        self.process = process
        self.stderrLog = stderrLog
    }

    /// Starts a server, runs `body` with it, and terminates it afterwards (also on a throw).
    static func withRunning<R>(_ body: (FixtureServer) async throws -> R) async throws -> R {
        try await withStopping(try await start(), stop: { await $0.stop() }, body)
    }

    /// Spawns the server and waits for its ready line.
    static func start() async throws -> FixtureServer {
        let script = repositoryRoot.appendingPathComponent("tools/fixture-server/fixture_server.py")
        guard FileManager.default.fileExists(atPath: script.path) else {
            throw Failure(description: "no fixture server at \(script.path)")
        }
        let stderrLog = FileManager.default.temporaryDirectory.appendingPathComponent("fixture-server-\(UUID().uuidString).stderr")
        let process = try SpawnedProcess(
            ["/usr/bin/env", "python3", script.path, "--port", "0"],
            directory: repositoryRoot.path, standardOutput: .pipe, standardError: .file(stderrLog.path))
        let stdout = try #require(process.standardOutput)
        let line: Data = try await withCheckedThrowingContinuation { continuation in
            // A blocking read, kept off the cooperative thread pool.
            DispatchQueue.global().async {
                guard let line = readLine(from: stdout) else {
                    let stderr = (try? String(contentsOf: stderrLog, encoding: .utf8)) ?? ""
                    continuation.resume(throwing: Failure(description: "the fixture server exited before it was ready: \(stderr)"))
                    return
                }
                continuation.resume(returning: line)
            }
        }
        struct Ready: Decodable {
            let port: Int
            let control_port: Int
            let base_url: String
        }
        let ready = try JSONDecoder().decode(Ready.self, from: line)
        guard let baseURL = URL(string: ready.base_url), let controlURL = URL(string: "http://127.0.0.1:\(ready.control_port)") else {
            throw Failure(description: "bad ready line \(String(decoding: line, as: UTF8.self))")
        }
        return FixtureServer(baseURL: baseURL, controlURL: controlURL, process: process, stderrLog: stderrLog)
    }

    /// Changes the server's behaviour (`POST /control`), such as `["fail_status": 500, "fail_count": 1]`,
    /// `["malformed": true]`, `["refuse": true]` or `["reset": true]`; returns the new control state.
    @discardableResult
    func control(_ update: [String: Any]) async throws -> [String: Any] {
        var request = URLRequest(url: controlURL.appendingPathComponent("control"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: update)
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200, let state = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw Failure(description: "POST /control \(update) answered \(status): \(String(decoding: data, as: UTF8.self))")
        }
        return state
    }

    /// The requests the API port served so far, in order (`GET /requests`).
    func requests() async throws -> [LoggedRequest] {
        let (data, response) = try await session.data(from: controlURL.appendingPathComponent("requests"))
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw Failure(description: "GET /requests failed: \(String(decoding: data, as: UTF8.self))")
        }
        return try JSONDecoder().decode([LoggedRequest].self, from: data)
    }

    /// Forgets the requests logged so far (`POST /requests/clear`).
    func clearRequests() async throws {
        var request = URLRequest(url: controlURL.appendingPathComponent("requests/clear"))
        request.httpMethod = "POST"
        let (_, response) = try await session.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw Failure(description: "POST /requests/clear failed") }
    }

    /// Kills the server and waits until it has exited. Calling it again does nothing.
    /// SIGKILL, not SIGTERM (which it obeys too): SIGTERM stops it only at its next half-second
    /// poll, and after a request it still holds (`delay_ms`), a cost every test would pay.
    func stop() async {
        process.signal(SIGKILL)
        _ = await process.exited()
        session.invalidateAndCancel()
        try? FileManager.default.removeItem(at: stderrLog)
    }
}

