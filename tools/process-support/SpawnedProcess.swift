import CSpawn
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process started with `posix_spawn`, for the tests and tools that start one
/// (fixture server, nginx, store helpers, the stress child, `freshet verify`'s child).
///
/// Why not Foundation's `Process`: on Swift 6.3 Linux, `Process.run` reads past `readdir`'s
/// buffer (`findMaximumOpenFromProcSelfFD` copies a 256-byte `d_name`; a SIGSEGV in one full
/// test run, an ASan report in every one), and a child it starts from a Swift concurrency
/// thread inherits that thread's blocked `SIGTERM`, so `terminate()` is ignored. Here the child
/// starts with an empty signal mask (`POSIX_SPAWN_SETSIGMASK`) and the default action for the
/// usual signals (`POSIX_SPAWN_SETSIGDEF`), its standard streams are what ``Input``/``Output``
/// say, and every other descriptor is closed in the child (`posix_spawn_file_actions_addclosefrom_np`,
/// glibc 2.34).
///
/// ```swift
/// let child = try SpawnedProcess(["/usr/bin/env", "python3", "-c", "print(1)"], standardOutput: .pipe)
/// let lines = child.readOutputLines()   // ["1"]
/// let end = child.wait()                // .exited(0)
/// ```
///
/// Waiting reaps the child once; ``signal(_:)`` never reaches another process that reused
/// the pid, because the child is only reaped under the same lock (see ``wait()``).
package final class SpawnedProcess: @unchecked Sendable {
    /// How a child ended: its exit status, or the number of the signal that killed it.
    package enum Termination: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)

        /// The exit status, or the signal's number: Foundation's `terminationStatus`, which
        /// callers compare with `SIGKILL` and exit codes alike.
        package var status: Int32 {
            switch self {
            case .exited(let status): status
            case .signaled(let signal): signal
            }
        }

        package var description: String {
            switch self {
            case .exited(let status): "exit status \(status)"
            case .signaled(let signal): "signal \(signal)"
            }
        }
    }

    /// The child's standard input.
    package enum Input: Sendable {
        /// `/dev/null`: reads see the end at once.
        case null
        /// This process's standard input.
        case inherit
        /// A pipe: the write end is ``standardInput`` (see ``send(_:)``).
        case pipe
    }

    /// Where the child's standard output or standard error goes.
    package enum Output: Sendable {
        /// `/dev/null`.
        case discard
        /// This process's stream of the same number.
        case inherit
        /// A pipe: the read end is ``standardOutput`` / ``standardError``.
        case pipe
        /// A file, created or truncated (mode 0644).
        case file(String)
        /// Standard error only: the same destination as standard output.
        case standardOutput
    }

    /// Starting the child failed: `call` returned the `errno` value `code`.
    package struct SpawnError: Error, CustomStringConvertible {
        package let call: String
        package let code: Int32
        package let executable: String

        package var description: String {
            "cannot start \(executable): \(call) failed: \(String(cString: strerror(code))) (errno \(code))"
        }
    }

    /// The child's process id.
    package let pid: pid_t
    /// The write end of the child's standard input when it is ``Input/pipe``, else nil.
    /// Owned by this object: closed in `deinit`.
    package let standardInput: Int32?
    /// The read end of the child's standard output when it is ``Output/pipe``, else nil.
    /// Owned by this object: closed in `deinit`.
    package let standardOutput: Int32?
    /// The read end of the child's standard error when it is ``Output/pipe``, else nil.
    package let standardError: Int32?
    /// `arguments` as given, for messages.
    package let arguments: [String]

    private let lock = NSLock()
    private var termination: Termination?

    /// The signals whose action the child resets to the default: a parent that ignores one
    /// (SIGPIPE in many servers) would otherwise pass the ignoring on through exec.
    private static let defaultedSignals: [Int32] = [SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGCHLD, SIGALRM, SIGUSR1, SIGUSR2]

    /// Starts `arguments[0]` (a path: use `/usr/bin/env` first to search `PATH`) with the rest
    /// as its arguments.
    /// - Parameters:
    ///   - environment: the child's whole environment; nil passes this process's on.
    ///   - directory: the child's working directory; nil keeps this process's.
    /// - Throws: ``SpawnError`` when a pipe, a file or the process cannot be created (for
    ///   example `posix_spawn` with ENOENT for a missing executable, or `open` for a file
    ///   destination). Nothing is left running or open then.
    package init(
        _ arguments: [String],
        environment: [String: String]? = nil,
        directory: String? = nil,
        standardInput: Input = .null,
        standardOutput: Output = .inherit,
        standardError: Output = .inherit
    ) throws(SpawnError) {
        precondition(!arguments.isEmpty, "SpawnedProcess needs at least the executable")
        let executable = arguments[0]
        self.arguments = arguments
        func failure(_ call: String, _ code: Int32) -> SpawnError { SpawnError(call: call, code: code, executable: executable) }

        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        // Descriptors of this process that the child uses; closed here after the spawn.
        var parentCopies: [Int32] = []
        var ownEnds: [Int32] = [] // the ends this object keeps; closed on a failure
        defer { for fd in parentCopies { close(fd) } }

        // A pipe whose ends close on exec: another child spawned meanwhile must not hold one open.
        func makePipe() throws(SpawnError) -> (read: Int32, write: Int32) {
            var ends: [Int32] = [-1, -1]
            guard cspawn_pipe_cloexec(&ends) == 0 else { throw failure("pipe2", errno) }
            return (ends[0], ends[1])
        }
        // Sets up descriptor `target` (1 or 2) of the child; returns the read end of a pipe.
        func route(_ output: Output, to target: Int32) throws(SpawnError) -> Int32? {
            switch output {
            case .inherit:
                return nil
            case .discard:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
                return nil
            case .file(let path):
                let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
                guard fd >= 0 else { throw failure("open(\(path))", errno) }
                parentCopies.append(fd)
                posix_spawn_file_actions_adddup2(&actions, fd, target)
                return nil
            case .pipe:
                let ends = try makePipe()
                parentCopies.append(ends.write)
                ownEnds.append(ends.read)
                posix_spawn_file_actions_adddup2(&actions, ends.write, target)
                return ends.read
            case .standardOutput:
                precondition(target == 2, "only standard error can follow standard output")
                posix_spawn_file_actions_adddup2(&actions, 1, 2)
                return nil
            }
        }
        do {
            if case .standardOutput = standardOutput { preconditionFailure("standard output cannot follow itself") }
            switch standardInput {
            case .null:
                posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
                self.standardInput = nil
            case .inherit:
                self.standardInput = nil
            case .pipe:
                let ends = try makePipe()
                parentCopies.append(ends.read)
                ownEnds.append(ends.write)
                posix_spawn_file_actions_adddup2(&actions, ends.read, 0)
                self.standardInput = ends.write
            }
            self.standardOutput = try route(standardOutput, to: 1)
            self.standardError = try route(standardError, to: 2)
        } catch {
            for fd in ownEnds { close(fd) }
            throw error
        }
        var rc = cspawn_addclosefrom(&actions, 3)
        if rc == 0, let directory { rc = cspawn_addchdir(&actions, directory) }
        guard rc == 0 else {
            for fd in ownEnds { close(fd) }
            throw failure("posix_spawn_file_actions", rc)
        }

        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaulted = sigset_t()
        sigemptyset(&defaulted)
        for signal in Self.defaultedSignals { sigaddset(&defaulted, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaulted)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let environmentLines = environment.map { $0.map { "\($0.key)=\($0.value)" } }
        var pid: pid_t = 0
        rc = withCStrings(arguments) { argv in
            if let environmentLines {
                return withCStrings(environmentLines) { envp in posix_spawn(&pid, executable, &actions, &attributes, argv, envp) }
            }
            return posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        }
        guard rc == 0 else {
            for fd in ownEnds { close(fd) }
            throw failure("posix_spawn", rc)
        }
        self.pid = pid
    }

    deinit {
        if let standardInput { close(standardInput) }
        if let standardOutput { close(standardOutput) }
        if let standardError { close(standardError) }
    }

    /// Sends `signal` (`SIGKILL`, `SIGTERM`, …) to the child unless it has been reaped already;
    /// does nothing then. `kill(2)`'s error is ignored on purpose: the only one possible for
    /// our own unreaped child is ESRCH's race with its exit, which `wait()` reports anyway.
    package func signal(_ signal: Int32) {
        lock.lock()
        defer { lock.unlock() }
        if termination == nil { _ = kill(pid, signal) }
    }

    /// Writes `text` to the child's standard input (a pipe), all of it, retrying on EINTR.
    /// - Throws: ``SpawnError`` (`write`, with EPIPE once the child closed its input or ended).
    package func send(_ text: String) throws(SpawnError) {
        guard let fd = standardInput else { preconditionFailure("send(_:) needs standardInput: .pipe") }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                bytes = bytes.dropFirst(n)
            } else if n < 0, errno != EINTR {
                throw SpawnError(call: "write", code: errno, executable: arguments[0])
            }
        }
    }

    /// Blocks until the child has ended and returns how; later calls return the same value.
    /// Retries on EINTR. The thread waits without reaping (`waitid` with `WNOWAIT`) and reaps
    /// under the lock that ``signal(_:)`` holds, so a signal never goes to a reused pid.
    package func wait() -> Termination {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 {
            if errno == EINTR { continue }
            break // ECHILD: another caller reaped it already; the value is below.
        }
        lock.lock()
        defer { lock.unlock() }
        if let termination { return termination }
        var status: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &status, 0) } while result == -1 && errno == EINTR
        // A status that is neither an exit nor a signal cannot come from waitpid without
        // WUNTRACED; -1 (ECHILD) cannot happen for our unreaped child.
        let ended: Termination = (status & 0x7f) == 0 ? .exited((status >> 8) & 0xff) : .signaled(status & 0x7f)
        termination = ended
        return ended
    }

    /// Waits for the child's end on a thread of its own (not a cooperative-pool thread).
    package func exited() async -> Termination {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: self.wait()) }
        }
    }

    /// Reads ``standardOutput`` to its end (blocking) and returns its lines without their
    /// line breaks; empty when standard output is not a pipe.
    package func readOutputLines() -> [String] {
        guard let fd = standardOutput else { return [] }
        return Self.readLines(fd)
    }

    /// Reads ``standardOutput`` to its end (blocking), as bytes, retrying on EINTR.
    /// - Throws: ``SpawnError`` (`read`) on a read error.
    package func readOutput() throws(SpawnError) -> Data {
        guard let fd = standardOutput else { preconditionFailure("readOutput() needs standardOutput: .pipe") }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n > 0 {
                data.append(contentsOf: buffer[0..<n])
            } else if n == 0 {
                return data
            } else if errno != EINTR {
                throw SpawnError(call: "read", code: errno, executable: arguments[0])
            }
        }
    }

    /// The same for ``standardError``.
    package func readErrorLines() -> [String] {
        guard let fd = standardError else { return [] }
        return Self.readLines(fd)
    }

    private static func readLines(_ fd: Int32) -> [String] {
        var lines: [String] = []
        while let line = readLine(from: fd) { lines.append(String(decoding: line, as: UTF8.self)) }
        return lines
    }

    /// Runs the child to its end: reads its standard output (a pipe; standard error where
    /// `standardError` says, `.standardOutput` to merge it in) on a thread of its own and
    /// returns the lines and how it ended.
    /// - Throws: ``SpawnError`` when it cannot start.
    package static func run(
        _ arguments: [String],
        environment: [String: String]? = nil,
        directory: String? = nil,
        standardError: Output = .inherit
    ) async throws(SpawnError) -> (termination: Termination, lines: [String]) {
        let child = try SpawnedProcess(arguments, environment: environment, directory: directory, standardOutput: .pipe, standardError: standardError)
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let lines = child.readOutputLines()
                continuation.resume(returning: (child.wait(), lines))
            }
        }
    }

    /// The same, blocking the calling thread (for synchronous tools such as `freshet verify`).
    package static func runBlocking(
        _ arguments: [String],
        environment: [String: String]? = nil,
        directory: String? = nil,
        standardError: Output = .inherit
    ) throws(SpawnError) -> (termination: Termination, lines: [String]) {
        let child = try SpawnedProcess(arguments, environment: environment, directory: directory, standardOutput: .pipe, standardError: standardError)
        let lines = child.readOutputLines()
        return (child.wait(), lines)
    }
}

/// Calls `body` with a NULL-terminated C array of copies of `strings`, valid during the call.
private func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for pointer in pointers { free(pointer) } }
    return body(pointers)
}
