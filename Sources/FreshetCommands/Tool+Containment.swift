import Foundation
import ProcessSupport
import Freshet

extension Tool {
    /// Where `freshet verify` does its reading. LMDB trusts the pages of its file: a damaged
    /// page can make it read out of bounds and crash the process (the LMDB documentation's
    /// caveats: "the database is not checksummed"). `verify` is run on stores suspected of
    /// damage, so the command line runs it in a child process and reports a crash there as a
    /// problem found (exit 1) instead of dying with it.
    public enum Containment: Sendable {
        /// Read in this process (tests, benchmarks, and the child itself).
        case inProcess
        /// Run `executable verify DIR …` (a `freshet` binary) with ``childEnvironmentKey`` set,
        /// relay its output, and turn a death by signal into a problem.
        case childProcess(executable: URL)
    }

    /// Set (to `1`) in the child's environment: the child reads in process.
    public static let childEnvironmentKey = "FRESHET_VERIFY_IN_PROCESS"

    /// The `freshet` binary's containment: a child process running this executable, unless
    /// this process is that child (or its path is unknown).
    public static func defaultContainment(environment: [String: String] = ProcessInfo.processInfo.environment) -> Containment {
        guard environment[childEnvironmentKey] == nil, let executable = Bundle.main.executableURL else { return .inProcess }
        return .childProcess(executable: executable)
    }

    /// Runs `verify` in a child process (see ``Containment``), relaying its standard output
    /// and standard error line by line. Exit status: the child's; 1 with a problem naming the
    /// signal when the child was killed by one; 2 when it cannot be started.
    func verifyInChild(_ options: Command.StoreOptions, executable: URL) -> Int32 {
        var environment = ProcessInfo.processInfo.environment
        environment[Self.childEnvironmentKey] = "1"
        // Standard error goes to a file, so a child that fills both streams never blocks on one
        // while this process waits on the other.
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("freshet-verify-\(UUID().uuidString).err")
        defer { _ = unlink(errorFile.path) }
        // posix_spawn, not Foundation's Process (tools/process-support/SpawnedProcess.swift says why).
        let child: SpawnedProcess
        do {
            child = try SpawnedProcess(
                [executable.path, "verify", options.directory] + (options.json ? ["--json"] : []),
                environment: environment, standardOutput: .pipe, standardError: .file(errorFile.path))
        } catch {
            standardError("freshet: cannot start \(executable.path) to verify \(options.directory) in a child process: \(error)")
            return 2
        }
        let stdout = child.readOutputLines()
        let end = child.wait()
        for line in stdout { standardOutput(line) }
        let stderr = FileManager.default.contents(atPath: errorFile.path) ?? Data()
        for line in Self.lines(stderr) { standardError(line) }
        guard case .signaled(let signal) = end else { return end.status }
        let name = strsignal(signal).map { String(cString: $0) } ?? "signal \(signal)"
        let message = "reading the store crashed the verify child with signal \(signal) (\(name)): LMDB met a damaged page in data.mdb; the store is damaged"
        if options.json {
            var w = JSONWriter(capacity: 256)
            w.object { o in
                o.field("type", string: "problem")
                o.field("database", string: "data.mdb")
                o.field("collection") { $0.null() }
                o.field("rowID") { $0.null() }
                o.field("lsn") { $0.null() }
                o.field("message", string: message)
            }
            standardOutput(w.takeLine())
        } else {
            standardOutput("PROBLEM  data.mdb: \(message)")
        }
        standardError("freshet: \(options.directory): \(message)")
        return 1
    }

    /// The lines of `data` (UTF-8), without their line breaks; no empty last line.
    private static func lines(_ data: Data) -> [String] {
        var lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }
}
