import Foundation
import ProcessSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// A child process whose standard output is read line by line, for tests that need a small
/// server on loopback. Standard error is discarded. Not `Sendable`: use it from one task.
final class ChildProcess {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let process: SpawnedProcess
    private var chunks: AsyncStream<Data>.Iterator
    private var pending = Data()

    /// Starts `arguments[0]` found on `PATH` with the remaining arguments.
    init(_ arguments: [String], directory: URL? = nil) throws {
        process = try SpawnedProcess(["/usr/bin/env"] + arguments, directory: directory?.path, standardOutput: .pipe, standardError: .discard)
        let (stream, continuation) = AsyncStream<Data>.makeStream()
        chunks = stream.makeAsyncIterator()
        guard let fd = process.standardOutput else { throw Failure(description: "no pipe on standard output") }
        // Blocking reads on a thread of their own, kept off the cooperative pool; the thread
        // keeps the process object (which owns `fd`) alive until it has read to the end.
        let process = process
        Thread.detachNewThread {
            withExtendedLifetime(process) {
                while let line = readLine(from: fd) { continuation.yield(line + Data([UInt8(ascii: "\n")])) }
            }
            continuation.finish()
        }
    }

    /// The next line of output (without its newline) that contains `text`; throws when the
    /// output ends first.
    func line(containing text: String) async throws -> String {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending = Data(pending[pending.index(after: newline)...])
                if line.contains(text) { return line }
            } else if let chunk = await chunks.next() {
                pending.append(chunk)
            } else {
                throw Failure(description: "\(process.arguments.dropFirst()) ended before printing a line containing \(text.debugDescription)")
            }
        }
    }

    /// Kills the process (SIGKILL: the servers here need no graceful exit) and waits for it
    /// to exit. Calling it again does nothing.
    func stop() {
        process.signal(SIGKILL)
        _ = process.wait()
    }

    deinit {
        stop()
    }
}

/// The port number that follows the word `port` in `line`, e.g. 8000 in
/// `Serving HTTP on 127.0.0.1 port 8000 (http://127.0.0.1:8000/) ...`.
func port(in line: String) throws -> Int {
    let words = line.split(separator: " ")
    let index = try #require(words.firstIndex(of: "port"))
    return try #require(Int(words[words.index(after: index)]))
}

/// Runs `body` with the base URL and port of `python3 -m http.server` serving `files` (relative
/// path → content) from a fresh temporary directory on 127.0.0.1, on a port the system picks. The
/// server is stopped and the directory removed afterwards.
func withFileServer<Result>(
    files: [String: String],
    _ body: (_ baseURL: URL, _ server: ChildProcess, _ port: Int) async throws -> Result
) async throws -> Result {
    let directory = FileManager.default.temporaryDirectory.appending(path: "freshet-http-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { removeDirectory(directory) }
    for (path, content) in files {
        let file = directory.appending(path: path)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(content.utf8).write(to: file)
    }
    let server = try ChildProcess(["python3", "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", directory.path])
    defer { server.stop() }
    let port = try port(in: try await server.line(containing: "Serving HTTP on"))
    return try await body(try #require(URL(string: "http://127.0.0.1:\(port)/")), server, port)
}

/// A TCP server on 127.0.0.1 that accepts connections, reads the request and never answers.
/// It prints `port N` when listening and `received` after reading each request.
func silentServer() throws -> ChildProcess {
    let script = """
    import socket
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    print("port", server.getsockname()[1], flush=True)
    connections = []
    while True:
        connection, _ = server.accept()
        connections.append(connection)
        connection.recv(65536)
        print("received", flush=True)
    """
    return try ChildProcess(["python3", "-u", "-c", script])
}

private func removeDirectory(_ directory: URL) {
    do {
        try FileManager.default.removeItem(at: directory)
    } catch {
        Issue.record("could not remove \(directory.path): \(error)")
    }
}

