import Foundation
import ProcessSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The fixture API server (tools/fixture-server/fixture_server.py), run as a child process.
@MainActor
final class FixtureServer {
    let process: SpawnedProcess
    let baseURL: URL
    /// The control port: tells the server to fail, delay or refuse (see tools/fixture-server/README.md).
    let controlURL: URL

    private init(process: SpawnedProcess, baseURL: URL, controlURL: URL) {
        self.process = process
        self.baseURL = baseURL
        self.controlURL = controlURL
    }

    /// `POST /control` with `settings`, such as `["refuse": true]`.
    func control(_ settings: [String: Any]) async throws {
        try await send("POST", controlURL.appendingPathComponent("control"), settings)
    }

    /// `PATCH path` on the API port with `fields` as JSON, straight from URLSession (not through
    /// a store): another client's edit, which the server announces on `GET /events`.
    func patch(_ path: String, _ fields: [String: Any]) async throws {
        try await send("PATCH", baseURL.appendingPathComponent(path), fields)
    }

    /// Sends `body` as JSON with `method` to `url`; anything but a 200 is a ``DemoFailure``.
    private func send(_ method: String, _ url: URL, _ body: [String: Any]) async throws {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (_, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw DemoFailure(description: "the fixture server refused \(method) \(url.path) \(body)")
        }
    }

    /// The demo's port: stable across runs, so stored page URLs and their validators still
    /// match the next run's requests (a real API's base URL does not change either).
    static let preferredPort = 8151

    /// Starts the server on 127.0.0.1:8151, or on a free port when that one is taken, and
    /// waits for its ready line.
    static func start(requestLog: URL) throws -> FixtureServer {
        do {
            return try start(requestLog: requestLog, port: preferredPort)
        } catch {
            return try start(requestLog: requestLog, port: 0)
        }
    }

    private static func start(requestLog: URL, port: Int) throws -> FixtureServer {
        let script = URL(fileURLWithPath: "tools/fixture-server/fixture_server.py")
        guard FileManager.default.fileExists(atPath: script.path) else {
            throw DemoFailure(description: "run the demo from the repository root (no \(script.path) here)")
        }
        let process = try SpawnedProcess(
            ["/usr/bin/env", "python3", script.path, "--port", String(port), "--max-age", "30", "--request-log", requestLog.path],
            standardOutput: .pipe, standardError: .discard)
        guard let fd = process.standardOutput, let line = readLine(from: fd) else {
            throw DemoFailure(description: "the fixture server exited before it was ready")
        }
        struct Ready: Decodable { let base_url: String; let control_port: Int }
        let ready = try JSONDecoder().decode(Ready.self, from: line)
        guard let url = URL(string: ready.base_url), let control = URL(string: "http://127.0.0.1:\(ready.control_port)") else {
            throw DemoFailure(description: "bad ready line \(String(decoding: line, as: UTF8.self))")
        }
        return FixtureServer(process: process, baseURL: url, controlURL: control)
    }

    /// Kills the server and waits for it; calling it again does nothing. SIGKILL: the demo
    /// needs nothing from a graceful exit.
    func stop() {
        process.signal(SIGKILL)
        _ = process.wait()
    }

    isolated deinit { stop() }
}

