import Foundation

extension Tool {
    /// The `freshet` binary's run: standard output through an ``OutputWriter`` on descriptor 1
    /// (line by line on a terminal, 64 KiB at a time otherwise), standard error unbuffered, and
    /// `verify` contained in a child process (``defaultContainment(environment:)``).
    ///
    /// - Returns: the command's exit status, or 2 when standard output could not be written
    ///   (`EIO`, `ENOSPC`, …; one line on standard error:
    ///   `freshet: cannot write the output: No space left on device`, strerror(3) wording).
    public static func runProcess(_ arguments: [String]) -> Int32 {
        let output = OutputWriter(fileDescriptor: STDOUT_FILENO, capacity: isatty(STDOUT_FILENO) == 1 ? 1 : 65_536)
        let tool = Tool(
            standardOutput: output.writeLine,
            // What was printed before an error line comes before it, as with unbuffered output.
            standardError: { line in
                output.flush()
                writeStandardError(line)
            },
            containment: defaultContainment(),
            standardOutputBytes: output.writeLine(bytes:))
        let status = tool.run(arguments)
        if let code = output.flush() {
            writeStandardError("freshet: " + OutputWriter.failureText(code))
            return 2
        }
        return status
    }

    /// Writes `line` and a newline to descriptor 2. A failure there has nowhere to be reported,
    /// so it only stops the attempt.
    private static func writeStandardError(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { b in
                guard let base = b.baseAddress else { return 0 }
                return write(STDERR_FILENO, base + written, b.count - written)
            }
            if n > 0 { written += n } else if n < 0, errno == EINTR { continue } else { return }
        }
    }
}
