import Foundation

/// Standard output of the `freshet` binary: lines buffered (64 KiB) and written with
/// `write(2)` to one file descriptor, noticing the first failed write. `print` and stdio
/// drop a failed write silently (an export to a full disk would exit 0 with a truncated
/// file); a ``Tool`` run through ``Tool/runProcess(_:)`` exits 2 instead and says why.
///
/// After a failure later lines are dropped (the output is already incomplete). A closed
/// pipe still ends the process with `SIGPIPE` (status 141), as for any Unix filter.
public final class OutputWriter {
    public let fileDescriptor: Int32
    private var buffer: [UInt8] = []
    private let capacity: Int
    /// The `errno` of the first failed write, nil while every write succeeded.
    public private(set) var failure: Int32?

    /// - Parameter capacity: bytes buffered before a `write(2)`; at least 1.
    public init(fileDescriptor: Int32, capacity: Int = 65_536) {
        self.fileDescriptor = fileDescriptor
        self.capacity = max(1, capacity)
        buffer.reserveCapacity(self.capacity)
    }

    /// Appends `line` and a newline; writes when the buffer is full.
    public func writeLine(_ line: String) {
        // Appended with its newline, not as `line + "\n"` (a string made per line).
        guard failure == nil else { return }
        buffer.append(contentsOf: line.utf8)
        buffer.append(0x0A)
        if buffer.count >= capacity { flush() }
    }

    /// Appends the line whose UTF-8 is `bytes` and a newline; writes when the buffer is full.
    public func writeLine(bytes: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        buffer.append(contentsOf: bytes)
        buffer.append(0x0A)
        if buffer.count >= capacity { flush() }
    }

    /// Appends `text` as it is (UTF-8); writes when the buffer is full.
    public func append(_ text: String) {
        guard failure == nil else { return }
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= capacity { flush() }
    }

    /// Writes what is buffered (retrying `EINTR` and short writes).
    /// - Returns: the `errno` of the first failed write of this writer, or nil.
    @discardableResult
    public func flush() -> Int32? {
        guard failure == nil else { return failure }
        var written = 0
        while written < buffer.count {
            let n = buffer.withUnsafeBytes { bytes in
                // Not empty here (written < count), so the base address is never nil.
                guard let base = bytes.baseAddress else { return 0 }
                return write(fileDescriptor, base + written, bytes.count - written)
            }
            if n > 0 {
                written += n
            } else if n < 0, errno == EINTR {
                continue
            } else {
                // write(2) returns 0 only for a count of 0; treat it as no space.
                failure = n < 0 ? errno : ENOSPC
                break
            }
        }
        buffer.removeAll(keepingCapacity: true)
        return failure
    }

    /// The line `freshet` prints for a failed write: `cannot write the output: No space left on device`.
    public static func failureText(_ code: Int32) -> String {
        "cannot write the output: \(String(cString: strerror(code)))"
    }
}
