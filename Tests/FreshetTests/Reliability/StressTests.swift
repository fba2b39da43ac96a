import Foundation
import ProcessSupport
import Testing

/// The `freshet-stress` campaign (tools/stress, `make stress`) run briefly from the suite, so
/// `swift test` alone also kills a writing child and checks the store (docs/reliability.md).
@Suite("Stress")
struct StressTests {
    /// Runs the built `freshet-stress` with `arguments`; returns its exit status and output.
    static func run(_ arguments: [String]) async throws -> (status: Int32, output: [String]) {
        let name = "freshet-stress"
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name),
            FixtureServer.repositoryRoot.appendingPathComponent(".build/debug/\(name)"),
        ]
        let executable = try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }, "build it with `swift build --build-tests`")
        let (termination, output) = try await SpawnedProcess.run([executable.path] + arguments, standardError: .standardOutput)
        return (termination.status, output)
    }

    @Test("eight SIGKILLs of a child writing and compacting in every durability mode lose no acknowledged event, and the seed is printed first")
    func shortRun() async throws {
        let (status, output) = try await Self.run(["--iterations", "8", "--seed", "12"])
        #expect(status == 0, "\(output)")
        #expect(output.first?.hasPrefix("freshet-stress: mode short, seed 12, 8 iterations, durability mixed, in ") == true, "\(output)")
        #expect(output.contains("  iterations (SIGKILLs)      8 (1 while starting), 1 stores"), "\(output)")
        #expect(output.last == "  lost                       0", "\(output)")
        // How many compactions run and where the kills land depends on timing; the lines do not.
        #expect(output.contains { $0.hasPrefix("  compactions attempted      ") && $0.hasSuffix(" kills landed during one") }, "\(output)")
        #expect(output.contains { $0.hasPrefix("  checks after a checkpoint  ") }, "\(output)")
    }

    @Test("bad arguments are exit status 2 with a message")
    func badArguments() async throws {
        let (status, output) = try await Self.run(["--durability", "sometimes"])
        #expect(status == 2)
        #expect(output == ["freshet-stress: --durability is full, relaxed or none"])
    }
}
