import Foundation

/// The fixture API server (tools/fixture-server/fixture_server.py), run as a child process.
final class FixtureServer {
    let process: Process
    let baseURL: URL

    private init(process: Process, baseURL: URL) {
        self.process = process
        self.baseURL = baseURL
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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, "--port", String(port), "--max-age", "30", "--request-log", requestLog.path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var buffer = Data()
        while !buffer.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { throw DemoFailure(description: "the fixture server exited before it was ready") }
            buffer.append(chunk)
        }
        let line = buffer.prefix(while: { $0 != UInt8(ascii: "\n") })
        struct Ready: Decodable { let base_url: String }
        let ready = try JSONDecoder().decode(Ready.self, from: line)
        guard let url = URL(string: ready.base_url) else { throw DemoFailure(description: "bad ready line \(String(decoding: line, as: UTF8.self))") }
        return FixtureServer(process: process, baseURL: url)
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    deinit { stop() }
}
