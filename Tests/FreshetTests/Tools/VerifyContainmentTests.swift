import Foundation
import Freshet
import FreshetCommands
import FreshetTesting
@testable import FreshetLMDB
import Synchronization
import Testing

extension LogToolTests {
    @Suite("freshet verify in a child process")
    struct VerifyContainmentTests {
        func run(_ arguments: [String], containment: Tool.Containment) -> ToolRun {
            let out = Mutex<[String]>([])
            let err = Mutex<[String]>([])
            let tool = Tool(standardOutput: { line in out.withLock { $0.append(line) } },
                            standardError: { line in err.withLock { $0.append(line) } }, containment: containment)
            let status = tool.run(arguments)
            return ToolRun(status: status, stdout: out.withLock { $0 }, stderr: err.withLock { $0 })
        }

        /// The `freshet` binary `swift build` put next to the test bundle.
        func freshetBinary() throws -> URL {
            let candidates = [
                URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("freshet"),
                Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("freshet"),
                FixtureServer.repositoryRoot.appendingPathComponent(".build/debug/freshet"),
            ]
            return try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }, "no freshet binary in \(candidates.map(\.path))")
        }

        @Test("the freshet binary verifies in a child process and prints what verifying in process prints, for an intact and a damaged store")
        func childMatchesInProcess() async throws {
            let binary = try freshetBinary()
            if case .childProcess = Tool.defaultContainment(environment: [:]) {} else { Issue.record("the binary must verify in a child") }
            if case .inProcess = Tool.defaultContainment(environment: [Tool.childEnvironmentKey: "1"]) {} else { Issue.record("the child must read in process") }
            try await withRecordedRun { directory, _ in
                let inProcess = runTool(["verify", directory.path])
                let child = run(["verify", directory.path], containment: .childProcess(executable: binary))
                #expect(child.status == 0)
                #expect(child.stdout == inProcess.stdout)
                #expect(child.stderr == [])
                try damageRecord(directory, lsn: 2, fromEnd: 10, mask: 0x01)
                let damaged = run(["verify", directory.path, "--json"], containment: .childProcess(executable: binary))
                #expect(damaged.status == 1)
                #expect(damaged.stdout == runTool(["verify", directory.path, "--json"]).stdout)
            }
        }

        @Test("a verify child killed by a signal (LMDB on a damaged page) is a problem found: exit 1, one line naming the signal, the caller goes on")
        func crashIsContained() async throws {
            try await withTemporaryDirectory { directory in
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                // Stands in for a freshet whose read of a damaged page faults.
                let crasher = directory.appendingPathComponent("crashing-freshet")
                try Data("#!/bin/sh\nkill -SEGV $$\n".utf8).write(to: crasher)
                try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: crasher.path)
                let text = run(["verify", directory.path], containment: .childProcess(executable: crasher))
                let message = "reading the store crashed the verify child with signal 11 (Segmentation fault): LMDB met a damaged page in data.mdb; the store is damaged"
                #expect(text.status == 1)
                #expect(text.stdout == ["PROBLEM  data.mdb: \(message)"])
                #expect(text.stderr == ["freshet: \(directory.path): \(message)"])
                let json = run(["verify", directory.path, "--json"], containment: .childProcess(executable: crasher))
                #expect(json.status == 1)
                #expect(json.stdout == [#"{"type":"problem","database":"data.mdb","collection":null,"rowID":null,"lsn":null,"message":"\#(message)"}"#])
                let missing = run(["verify", directory.path], containment: .childProcess(executable: directory.appendingPathComponent("no-such-binary")))
                #expect(missing.status == 2)
                #expect(missing.stderr.count == 1)
            }
        }
    }
}
