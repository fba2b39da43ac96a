import Foundation
import ProcessSupport
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// ProcessSupport's `SpawnedProcess` (posix_spawn), which the tests and tools use instead of
/// Foundation's `Process` (docs/reliability.md, "Child processes").
@Suite("Child processes started with posix_spawn", .scaledTimeLimit(minutes: 2))
struct SpawnedProcessTests {
    @Test("exit status and output lines are exact, standard error merged or kept apart")
    func exitAndOutput() async throws {
        let merged = try await SpawnedProcess.run(["/bin/sh", "-c", "echo one; echo two >&2; printf three; exit 3"], standardError: .standardOutput)
        #expect(merged.termination == .exited(3))
        #expect(merged.lines == ["one", "two", "three"])

        let apart = try SpawnedProcess(["/bin/sh", "-c", "echo out; echo err >&2; exit 0"], standardOutput: .pipe, standardError: .pipe)
        // Small outputs fit in the pipes' buffers, so reading one stream to its end first cannot block.
        #expect(apart.readOutputLines() == ["out"])
        #expect(apart.readErrorLines() == ["err"])
        #expect(apart.wait() == .exited(0))
        #expect(apart.wait() == .exited(0))
    }

    @Test("environment and working directory are the ones given; standard input is empty")
    func environmentAndDirectory() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spawned-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { removeItem(directory) }
        let resolved = directory.resolvingSymlinksInPath().path
        let result = try await SpawnedProcess.run(
            ["/bin/sh", "-c", "echo \"$GREETING\"; echo \"${HOME-unset}\"; pwd -P; cat; echo end"],
            environment: ["GREETING": "hello world", "PATH": "/usr/bin:/bin"], directory: directory.path)
        #expect(result.termination == .exited(0))
        #expect(result.lines == ["hello world", "unset", resolved, "end"])
    }

    @Test("a child spawned from a concurrency thread whose SIGTERM is blocked still stops on SIGTERM")
    func sigtermFromConcurrencyThread() async throws {
        let started = try await Task.detached { () throws -> (SpawnedProcess, mask: [String]) in
            // This task's thread: block SIGTERM here as Swift's pool threads may, so the test
            // does not depend on what the runtime does; restore the mask afterwards.
            var block = sigset_t(), previous = sigset_t()
            sigemptyset(&block)
            sigaddset(&block, SIGTERM)
            pthread_sigmask(SIG_BLOCK, &block, &previous)
            defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
            let child = try SpawnedProcess(["/bin/sh", "-c", "grep SigBlk /proc/self/status; echo ready; exec sleep 600"], standardOutput: .pipe)
            var lines: [String] = []
            while let line = readLine(from: try #require(child.standardOutput)) {
                lines.append(String(decoding: line, as: UTF8.self))
                if lines.last == "ready" { break }
            }
            return (child, lines)
        }.value
        let (child, lines) = started
        // The shell's mask: nothing blocked, whatever its parent thread had.
        #expect(lines == ["SigBlk:\t0000000000000000", "ready"])
        child.signal(SIGTERM)
        #expect(await child.exited() == .signaled(SIGTERM))
        // Reaped: a later signal is not sent to whatever reuses the pid, and the end stays known.
        child.signal(SIGKILL)
        #expect(child.wait() == .signaled(SIGTERM))
    }

    @Test("a missing executable is a typed error naming it, not a crash")
    func missingExecutable() throws {
        let error = #expect(throws: SpawnedProcess.SpawnError.self) {
            _ = try SpawnedProcess(["/nonexistent/freshet-tool", "x"])
        }
        #expect(error?.call == "posix_spawn")
        #expect(error?.code == ENOENT)
        #expect(error?.description == "cannot start /nonexistent/freshet-tool: posix_spawn failed: No such file or directory (errno 2)")
    }

    @Test("no descriptor of the parent leaks into the child beyond its standard streams")
    func descriptorsClosed() async throws {
        let result = try await SpawnedProcess.run(["/bin/sh", "-c", "ls /proc/self/fd"])
        // 0, 1, 2, and the one `ls` opens on /proc/self/fd.
        #expect(result.termination == .exited(0))
        #expect(result.lines == ["0", "1", "2", "3"])
    }

    private func removeItem(_ url: URL) {
        do { try FileManager.default.removeItem(at: url) } catch { Issue.record("could not remove \(url.path): \(error)") }
    }
}
