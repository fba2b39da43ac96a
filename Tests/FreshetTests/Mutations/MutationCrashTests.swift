import Foundation
import ProcessSupport
import Freshet
import FreshetHTTP
import FreshetTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension MutationTests {
    /// A process that proposes a mutation is killed (SIGKILL) while the request is in flight;
    /// the mutation is found in the log on reopening, sent again, and applied once.
    @Suite("Crash")
    struct Crash {
        @Test("a mutation whose process was killed mid-request is pending after reopening, is sent again and confirmed, and the server has one new todo")
        func killedMidRequest() async throws {
            let helper = try await CrashHelper.executable()
            try await FixtureServer.withRunning { server in
                // Every API answer waits: the helper's POST is still in flight when it dies. 8 s,
                // not less: with both cores busy, reading the helper's first line took over 2 s.
                let heldMs = 8000
                try await server.control(["delay_ms": heldMs])
                try await withTemporaryDirectory { directory in
                    let child = try CrashHelper(helper, arguments: [directory.path, server.baseURL.absoluteString])
                    let line: String
                    do {
                        line = try await child.firstLine()
                    } catch {
                        await child.kill()
                        throw error
                    }
                    let status = await child.kill()
                    #expect(status == SIGKILL, "the helper ended with \(status) instead of being killed")
                    let words = line.split(separator: " ")
                    #expect(words.first == "proposed", "the helper printed \(line.debugDescription)")
                    let uuid = try #require(words.count == 2 ? UUID(uuidString: String(words[1])) : nil, "the helper printed \(line.debugDescription)")
                    let id = MutationID(uuid)

                    // Reopen, offline at first: the store tries once at open and backs off.
                    let clock = FreshetTesting.TestClock()
                    let transport = SwitchableTransport(URLSessionTransport())
                    let dependencies = Dependencies(now: clock.dateSource, clock: clock, random: SeededRandom.source(seed: 0), transport: transport)
                    let store = try Store(directory: directory, configuration: .test(baseURL: server.baseURL), dependencies: dependencies)
                    defer { store.close() }
                    let queued = try store.pendingMutations()
                    #expect(queued.map(\.id) == [id])
                    #expect(queued.map(\.name) == ["createTodo"])
                    #expect(try store.ids("todos") == ["tmp-crash"])
                    let proposals = try store.mutationEvents()
                    #expect(proposals.count == 1)

                    // The network is back and answers at once.
                    try await server.control(["delay_ms": 0])
                    await clock.waitForSleepers(1)
                    transport.goOnline()
                    await store.networkDidBecomeReachable()
                    let outcome = try await store.handle(for: try #require(queued.first)).outcome()
                    #expect(outcome.id == id)
                    #expect(outcome.serverID == "201")
                    #expect(try store.pendingMutations().isEmpty)
                    #expect(try store.ids("todos") == ["201"])
                    #expect(transport.requests.allSatisfy { $0.headers["Idempotency-Key"] == id.description })

                    // Applied once, however many times it reached the server. The killed
                    // process's POST may still be held by the server's delay: a GET sent with
                    // the same delay is answered after it, so it sees the final data.
                    try await server.control(["delay_ms": heldMs])
                    let todos = try #require(try await server.getJSON("/todos") as? [[String: Any]])
                    #expect(todos.count == 201)
                    #expect(todos.filter { $0["title"] as? String == "written before the crash" }.count == 1)
                    #expect(todos.last?["id"] as? Int == 201)
                    let posts = try await server.loggedWrites().filter { $0.method == "POST" }
                    #expect((1...2).contains(posts.count), "POSTs logged: \(posts)")
                    #expect(posts.allSatisfy { $0.path == "/todos" && $0.status == 201 && $0.idempotency_key == id.description }, "POSTs logged: \(posts)")
                }
            }
        }
    }
}

/// The `freshet-crash-helper` executable (tools/crash-helper) run as a child process.
final class CrashHelper {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let process: Process
    private let exited: AsyncStream<Int32>
    private let stdout: Int32
    private let stderrLog: URL
    /// Keeps the pipe (and its file descriptors) open while the helper runs.
    private var pipe: Pipe?

    /// Starts `executable` with `arguments`; its standard error goes to a temporary file.
    init(_ executable: URL, arguments: [String]) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        let stderrLog = FileManager.default.temporaryDirectory.appendingPathComponent("crash-helper-\(UUID().uuidString).stderr")
        _ = FileManager.default.createFile(atPath: stderrLog.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: stderrLog)
        process.standardInput = FileHandle.nullDevice
        let exited = try process.runReportingExit()
        self.process = process
        self.exited = exited
        self.stdout = pipe.fileHandleForReading.fileDescriptor
        self.stderrLog = stderrLog
        self.pipe = pipe
    }

    /// The first line the helper prints, read with POSIX `read` (EINTR retried) on a thread
    /// of its own, off the cooperative pool.
    func firstLine() async throws -> String {
        let fd = stdout
        let line: Data? = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: readLine(from: fd))
            }
        }
        guard let line else {
            let stderr = (try? String(contentsOf: stderrLog, encoding: .utf8)) ?? ""
            throw Failure(description: "freshet-crash-helper printed nothing: \(stderr)")
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// Kills the helper with SIGKILL (`terminate()`'s SIGTERM may be blocked in a child
    /// spawned from a concurrency thread on Linux) and returns its termination status.
    @discardableResult
    func kill() async -> Int32 {
        if process.isRunning { _ = Glibc.kill(process.processIdentifier, SIGKILL) }
        var status: Int32 = -1
        for await s in exited { status = s }
        pipe = nil
        try? FileManager.default.removeItem(at: stderrLog)
        return status
    }

    /// The built helper: next to the test bundle, else in `.build/debug`; built with
    /// `swift build --product freshet-crash-helper` when neither exists.
    static func executable() async throws -> URL {
        let name = "freshet-crash-helper"
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
