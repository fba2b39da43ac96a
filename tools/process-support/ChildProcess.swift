import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads `fd` up to a newline (not included) or the end, retrying reads that a signal
/// interrupts (EINTR): Foundation's `FileHandle.availableData` traps on EINTR, which child
/// processes exiting (SIGCHLD) cause in test runs. Nil at the end of the stream.
///
/// Shared by the demo and the test suites that start child processes (fixture server, nginx).
package func readLine(from fd: Int32) -> Data? {
    var line = Data()
    var byte: UInt8 = 0
    while true {
        let n = read(fd, &byte, 1)
        if n == 1 {
            if byte == UInt8(ascii: "\n") { return line }
            line.append(byte)
        } else if n == 0 {
            return line.isEmpty ? nil : line
        } else if errno != EINTR {
            return line.isEmpty ? nil : line
        }
    }
}

extension Process {
    /// Starts the process and returns a stream that yields its exit status once, then ends:
    /// `for await status in exited {}` waits for the exit without blocking a thread.
    /// - Throws: what `run()` throws when the process cannot start.
    package func runReportingExit() throws -> AsyncStream<Int32> {
        let (exited, exit) = AsyncStream<Int32>.makeStream(bufferingPolicy: .unbounded)
        terminationHandler = { process in
            exit.yield(process.terminationStatus)
            exit.finish()
        }
        try run()
        return exited
    }

    /// Starts the process with its standard output on a pipe (and standard input empty), reads
    /// every line it prints, and returns them with its exit status once it has exited.
    /// Set `standardError` before calling to keep or drop it (the pipe takes it when it is the
    /// same `Pipe`: pass `mergingStandardError`).
    /// - Throws: what `run()` throws when the process cannot start.
    package func runCollectingLines(mergingStandardError: Bool = false) async throws -> (status: Int32, lines: [String]) {
        let pipe = Pipe()
        standardOutput = pipe
        if mergingStandardError { standardError = pipe }
        standardInput = FileHandle.nullDevice
        let exited = try runReportingExit()
        let fd = pipe.fileHandleForReading.fileDescriptor
        let lines: [String] = await withCheckedContinuation { continuation in
            // A thread of its own: the blocking reads must not hold a cooperative-pool thread.
            Thread.detachNewThread {
                var lines: [String] = []
                while let line = readLine(from: fd) { lines.append(String(decoding: line, as: UTF8.self)) }
                continuation.resume(returning: lines)
            }
        }
        var status: Int32 = -1
        for await s in exited { status = s }
        return (status, lines)
    }
}

/// Runs `body` with `resource`, then `stop`s it — also when `body` throws.
package func withStopping<Resource, R>(
    _ resource: Resource, stop: (Resource) async -> Void, _ body: (Resource) async throws -> R
) async throws -> R {
    do {
        let result = try await body(resource)
        await stop(resource)
        return result
    } catch {
        await stop(resource)
        throw error
    }
}
