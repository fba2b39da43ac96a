import Foundation
import ProcessSupport
#if canImport(Glibc)
import Glibc
#endif
import FreshetHTTP
import Synchronization
import Testing

/// A real nginx on a free loopback port serving files from a temporary directory: the
/// ETag and Last-Modified of a real-world server. `make test` installs nginx
/// (scripts/bootstrap.sh); without it the tests fail, they are not skipped.
final class NginxServer {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let executable = "/usr/sbin/nginx"

    /// `http://127.0.0.1:PORT`.
    let baseURL: URL
    /// The temporary directory: `nginx.conf`, `error.log`, `nginx.pid` and `www/`.
    let directory: URL
    /// The document root.
    var root: URL { directory.appendingPathComponent("www", isDirectory: true) }

    private let process: SpawnedProcess

    private init(baseURL: URL, directory: URL, process: SpawnedProcess) {
        self.baseURL = baseURL
        self.directory = directory
        self.process = process
    }

    /// Starts nginx serving `files` (path under the document root → content), runs `body`,
    /// then kills nginx and removes the directory (also on a throw).
    static func withRunning<R>(files: [String: Data], _ body: (NginxServer) async throws -> R) async throws -> R {
        try await withStopping(try await start(files: files), stop: { await $0.stop() }, body)
    }

    /// A port nothing listens on right now: bind a socket to 127.0.0.1:0, read the port the
    /// system chose, close the socket.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw Failure(description: "bind(127.0.0.1:0) failed: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw Failure(description: "getsockname failed: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Writes the files and the configuration, spawns nginx in the foreground (no daemon, no
    /// master process) and returns once it listens.
    ///
    /// Readiness: besides the configured error log, nginx logs at `notice` to its standard
    /// error, read here line by line with POSIX `read` (see `readLine(from:)`). Its last
    /// start-up notice, `getrlimit(RLIMIT_NOFILE)`, is written after the listening socket is
    /// open, so no polling or sleeping is needed.
    static func start(files: [String: Data]) async throws -> NginxServer {
        let fm = FileManager.default
        guard fm.isExecutableFile(atPath: executable) else {
            throw Failure(description: "nginx is not installed at \(executable): run `make test` (scripts/bootstrap.sh installs it) or apt-get install nginx-light")
        }
        let directory = fm.temporaryDirectory.appendingPathComponent("freshet-nginx-\(UUID().uuidString)", isDirectory: true)
        let www = directory.appendingPathComponent("www", isDirectory: true)
        try fm.createDirectory(at: www, withIntermediateDirectories: true)
        for (path, content) in files {
            let file = www.appendingPathComponent(path)
            try fm.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try content.write(to: file)
        }
        let port = try freePort()
        let tmp = directory.path
        let config = """
        daemon off;
        master_process off;
        pid \(tmp)/nginx.pid;
        error_log \(tmp)/error.log;
        error_log stderr notice;
        events {}
        http {
            access_log off;
            types { application/json json; }
            client_body_temp_path \(tmp)/client_body;
            proxy_temp_path \(tmp)/proxy;
            fastcgi_temp_path \(tmp)/fastcgi;
            uwsgi_temp_path \(tmp)/uwsgi;
            scgi_temp_path \(tmp)/scgi;
            server {
                listen 127.0.0.1:\(port);
                root \(tmp)/www;
                location /noetag/ { etag off; }
            }
        }

        """
        let configFile = directory.appendingPathComponent("nginx.conf")
        try Data(config.utf8).write(to: configFile)

        let process: SpawnedProcess
        do {
            // -p: the prefix for relative paths; -e: the error log used before the configuration is read.
            process = try SpawnedProcess(
                [executable, "-p", tmp + "/", "-e", tmp + "/error.log", "-c", configFile.path],
                directory: directory.path, standardOutput: .discard, standardError: .pipe)
        } catch {
            try? fm.removeItem(at: directory)
            throw Failure(description: "cannot start \(executable): \(error)")
        }
        let (lines, output) = AsyncStream<String>.makeStream(bufferingPolicy: .unbounded)
        let fd = try #require(process.standardError)
        // Blocking reads on a thread of their own, kept off the cooperative pool, until nginx
        // exits (so that its standard error never fills up).
        // The thread keeps `process` (which owns `fd`) alive until it has read to the end.
        Thread.detachNewThread {
            withExtendedLifetime(process) {
                while let line = readLine(from: fd) { output.yield(String(decoding: line, as: UTF8.self)) }
            }
            output.finish()
        }
        var log: [String] = []
        for await line in lines {
            log.append(line)
            if line.contains("[emerg]") || line.contains("[alert]") { break }
            if line.contains("getrlimit(RLIMIT_NOFILE)") {
                return NginxServer(baseURL: URL(string: "http://127.0.0.1:\(port)")!, directory: directory, process: process)
            }
        }
        process.signal(SIGKILL)
        _ = await process.exited()
        let errorLog = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
        try? fm.removeItem(at: directory)
        throw Failure(description: "nginx did not start on port \(port): \(log.joined(separator: " | ")) \(errorLog)")
    }

    /// Kills nginx with SIGKILL and waits until it has exited; removes the directory.
    /// SIGKILL: nothing it holds needs a graceful exit (its files are removed next).
    func stop() async {
        process.signal(SIGKILL)
        _ = await process.exited()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The ETag nginx sends for the file at `path`: `"<mtime in hex>-<size in hex>"`, strong.
    func expectedETag(of path: String) throws -> String {
        let attributes = try FileManager.default.attributesOfItem(atPath: root.appendingPathComponent(path).path)
        let modified = try #require(attributes[.modificationDate] as? Date)
        let size = try #require((attributes[.size] as? NSNumber)?.intValue)
        return "\"" + String(Int(modified.timeIntervalSince1970), radix: 16) + "-" + String(size, radix: 16) + "\""
    }

    /// The Last-Modified nginx sends for the file at `path`.
    func expectedLastModified(of path: String) throws -> String {
        let attributes = try FileManager.default.attributesOfItem(atPath: root.appendingPathComponent(path).path)
        let modified = try #require(attributes[.modificationDate] as? Date)
        return HTTPDate.format(Date(timeIntervalSince1970: modified.timeIntervalSince1970.rounded(.down)))
    }

    /// Gives the file at `path` new content and a modification time `seconds` later than now
    /// on disk, so that nginx's validators change.
    func rewrite(_ path: String, _ content: Data, laterBy seconds: TimeInterval) throws {
        let file = root.appendingPathComponent(path)
        let old = try #require(try FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date)
        try content.write(to: file)
        try FileManager.default.setAttributes([.modificationDate: old.addingTimeInterval(seconds)], ofItemAtPath: file.path)
    }
}

/// Decompresses a fixture of `fixtures/` (a `.json.gz`) with gzip, reading its output with
/// POSIX `read`.
func decompressedFixture(_ path: String) throws -> Data {
    let file = FixtureServer.repositoryRoot.appendingPathComponent("fixtures").appendingPathComponent(path)
    guard FileManager.default.fileExists(atPath: file.path) else {
        throw NginxServer.Failure(description: "no fixture at \(file.path)")
    }
    let process = try SpawnedProcess(["/usr/bin/env", "gzip", "-dc", file.path], standardOutput: .pipe, standardError: .discard)
    let data = try process.readOutput()
    let end = process.wait()
    guard end == .exited(0), !data.isEmpty else {
        throw NginxServer.Failure(description: "gzip -dc \(file.path) ended with \(end)")
    }
    return data
}
