import Foundation
import ProcessSupport
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The `freshet-store-helper` executable (tools/store-helper) run as a child process, with
/// pipes on its standard input and output. Coordination is by lines on those pipes only.
/// Other helper executables (`freshet-crash-helper`) run through ``init(executable:_:)``.
final class StoreHelper {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let child: SpawnedProcess
    private let stderrLog: URL

    /// Starts the helper with `arguments`; its standard error goes to a temporary file.
    convenience init(_ arguments: [String]) async throws {
        try self.init(executable: try await Self.executable(), arguments)
    }

    /// Starts the built helper `executable` (see ``executable(named:)``) with `arguments`.
    init(executable: URL, _ arguments: [String]) throws {
        let stderrLog = FileManager.default.temporaryDirectory.appendingPathComponent("\(executable.lastPathComponent)-\(UUID().uuidString).stderr")
        child = try SpawnedProcess([executable.path] + arguments, standardInput: .pipe, standardOutput: .pipe, standardError: .file(stderrLog.path))
        self.stderrLog = stderrLog
    }

    /// The next line the helper prints, read with POSIX `read` (EINTR retried) on a thread
    /// of its own, off the cooperative pool (``offPool(_:)``).
    func nextLine() async throws -> String {
        let child = child
        let line: Data? = await offPool { child.standardOutput.flatMap { readLine(from: $0) } }
        guard let line else {
            let stderr = (try? String(contentsOf: stderrLog, encoding: .utf8)) ?? ""
            throw Failure(description: "\(child.arguments) ended its output: \(stderr)")
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// Writes one line to the helper's standard input.
    func send(_ line: String) throws {
        try child.send(line + "\n")
    }

    /// Waits for the helper to exit and returns its exit status, or the number of the signal
    /// that killed it (`SpawnedProcess.Termination.status`).
    func waitForExit() async -> Int32 {
        await child.exited().status
    }

    /// Kills the helper with SIGKILL and returns its termination status (`SIGKILL` when the
    /// kill ended it, its exit status when it had exited already).
    @discardableResult
    func kill() async -> Int32 {
        child.signal(SIGKILL)
        let status = await waitForExit()
        try? FileManager.default.removeItem(at: stderrLog)
        return status
    }

    /// The built `freshet-store-helper`.
    static func executable() async throws -> URL {
        try await executable(named: "freshet-store-helper")
    }

    /// The built helper `name`: next to the test bundle, else in `.build/debug`; built with
    /// `swift build --product NAME` when neither exists.
    static func executable(named name: String) async throws -> URL {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name),
            FixtureServer.repositoryRoot.appendingPathComponent(".build/debug/\(name)"),
        ]
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) { return found }
        let build = try await SpawnedProcess.run(
            ["/usr/bin/env", "swift", "build", "--product", name], directory: FixtureServer.repositoryRoot.path, standardError: .discard)
        let status = build.termination
        guard status == .exited(0), let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw Failure(description: "`swift build --product \(name)` ended with \(status) and no \(name) was found in \(candidates.map(\.path))")
        }
        return found
    }
}
