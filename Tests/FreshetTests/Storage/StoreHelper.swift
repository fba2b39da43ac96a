import Foundation
import ProcessSupport
#if canImport(Glibc)
import Glibc
#endif

/// The `freshet-store-helper` executable (tools/store-helper) run as a child process, with
/// pipes on its standard input and output. Coordination is by lines on those pipes only.
final class StoreHelper {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let process: Process
    private let exited: AsyncStream<Int32>
    private let stdout: Int32
    private let stderrLog: URL
    /// Keep the pipes (and their file descriptors) open while the helper runs.
    private var output: Pipe?
    private var input: Pipe?

    /// Starts the helper with `arguments`; its standard error goes to a temporary file.
    init(_ arguments: [String]) async throws {
        let executable = try await Self.executable()
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        let stderrLog = FileManager.default.temporaryDirectory.appendingPathComponent("store-helper-\(UUID().uuidString).stderr")
        _ = FileManager.default.createFile(atPath: stderrLog.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: stderrLog)
        let exited = try process.runReportingExit()
        self.process = process
        self.exited = exited
        self.stdout = output.fileHandleForReading.fileDescriptor
        self.stderrLog = stderrLog
        self.output = output
        self.input = input
    }

    /// The next line the helper prints, read with POSIX `read` (EINTR retried) on a thread
    /// of its own, off the cooperative pool.
    func nextLine() async throws -> String {
        let fd = stdout
        let line: Data? = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: readLine(from: fd))
            }
        }
        guard let line else {
            let stderr = (try? String(contentsOf: stderrLog, encoding: .utf8)) ?? ""
            throw Failure(description: "freshet-store-helper \(process.arguments ?? []) ended its output: \(stderr)")
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// Writes one line to the helper's standard input.
    func send(_ line: String) throws {
        try input?.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Waits for the helper to exit and returns its status.
    func waitForExit() async -> Int32 {
        var status: Int32 = -1
        for await s in exited { status = s }
        return status
    }

    /// Kills the helper with SIGKILL and returns its termination status.
    @discardableResult
    func kill() async -> Int32 {
        if process.isRunning { _ = Glibc.kill(process.processIdentifier, SIGKILL) }
        let status = await waitForExit()
        output = nil
        input = nil
        try? FileManager.default.removeItem(at: stderrLog)
        return status
    }

    /// The built helper: next to the test bundle, else in `.build/debug`; built with
    /// `swift build --product freshet-store-helper` when neither exists.
    static func executable() async throws -> URL {
        let name = "freshet-store-helper"
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name),
            FixtureServer.repositoryRoot.appendingPathComponent(".build/debug/\(name)"),
        ]
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) { return found }
        let build = Process()
        build.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        build.arguments = ["swift", "build", "--product", name]
        build.currentDirectoryURL = FixtureServer.repositoryRoot
        build.standardOutput = FileHandle.nullDevice
        build.standardError = FileHandle.nullDevice
        build.standardInput = FileHandle.nullDevice
        let exited = try build.runReportingExit()
        var status: Int32 = -1
        for await s in exited { status = s }
        guard status == 0, let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw Failure(description: "`swift build --product \(name)` ended with status \(status) and no \(name) was found in \(candidates.map(\.path))")
        }
        return found
    }
}
