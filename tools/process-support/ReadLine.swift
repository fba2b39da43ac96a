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
/// Shared by SpawnedProcess, the demo and the test suites that start child processes.
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
