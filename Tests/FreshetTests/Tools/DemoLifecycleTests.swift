import Foundation
import ProcessSupport
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `freshet-demo --help`, an unknown argument, and a SIGTERM that must stop the fixture server
/// too (trial finding 14). The demo runs in a temporary directory whose `tools` and `fixtures`
/// link to the repository's, so its `demo-store` and request log stay out of the repository.
@Suite("freshet-demo: --help, unknown arguments, SIGTERM", .serialized, .scaledTimeLimit(minutes: 2))
struct DemoLifecycleTests {
    func withDemoDirectory(_ body: (URL, URL) async throws -> Void) async throws {
        let demo = try await StoreHelper.executable(named: "freshet-demo")
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
            for name in ["tools", "fixtures"] {
                try FileManager.default.createSymbolicLink(at: directory.appendingPathComponent(name),
                                                           withDestinationURL: FixtureServer.repositoryRoot.appendingPathComponent(name))
            }
            try await body(demo, directory)
        }
    }

    @Test("--help and -h print the usage and exit 0 without running the demo", arguments: ["--help", "-h"])
    func help(_ flag: String) async throws {
        try await withDemoDirectory { demo, directory in
            let run = try await SpawnedProcess.run([demo.path, flag], directory: directory.path, standardError: .standardOutput)
            #expect(run.termination == .exited(0))
            #expect(run.lines.first == "usage: freshet-demo [--help | -h]")
            #expect(run.lines.contains("It takes no other options and reads no environment variables. SIGINT (Ctrl-C) or SIGTERM"))
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("demo-store").path))
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("demo-requests.jsonl").path))
        }
    }

    @Test("--help into a full disk (/dev/full) exits 2 with one line on standard error")
    func helpToFullDisk() async throws {
        try await withDemoDirectory { demo, directory in
            let child = try SpawnedProcess([demo.path, "--help"], directory: directory.path, standardOutput: .file("/dev/full"), standardError: .pipe)
            let errors = child.readErrorLines()
            #expect(await child.exited() == .exited(2))
            #expect(errors == ["freshet-demo: cannot write the output: No space left on device"])
        }
    }

    @Test("an unknown argument exits 2 with one line on standard error")
    func unknownArgument() async throws {
        try await withDemoDirectory { demo, directory in
            let child = try SpawnedProcess([demo.path, "--fast"], directory: directory.path, standardOutput: .pipe, standardError: .pipe)
            let errors = child.readErrorLines()
            #expect(child.readOutputLines() == [])
            #expect(await child.exited() == .exited(2))
            #expect(errors == [#"freshet-demo: unknown argument "--fast" (freshet-demo takes only --help)"#])
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("demo-store").path))
        }
    }

    @Test("SIGTERM stops the fixture server before the demo exits: its port is closed")
    func sigtermStopsFixtureServer() async throws {
        try await withDemoDirectory { demo, directory in
            let child = try SpawnedProcess([demo.path], directory: directory.path, standardOutput: .pipe, standardError: .discard)
            let fd = try #require(child.standardOutput)
            // "Fixture server (…) on http://127.0.0.1:PORT/": printed once the server is ready.
            let first = String(decoding: try #require(readLine(from: fd)), as: UTF8.self)
            let port = try #require(first.split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: CharacterSet(charactersIn: "/"))) })
            #expect(first.hasPrefix("Fixture server (real PokeAPI data"))
            #expect(Self.accepts(port: port))
            child.signal(SIGTERM)
            #expect(await child.exited() == .signaled(SIGTERM))
            #expect(!Self.accepts(port: port))
        }
    }

    /// Whether something listens on 127.0.0.1:`port` (a TCP connect succeeds).
    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return rc == 0
    }
}
