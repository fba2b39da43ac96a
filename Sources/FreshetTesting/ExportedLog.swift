import Foundation
import Freshet

/// A log exported with `freshet export` (JSON Lines, docs/log-format.md §13), turned into a
/// store a test can observe, replay and then drive with scripted requests — the way a field
/// bug becomes a regression test.
///
/// ```swift
/// let log = try ExportedLog(contentsOf: URL(filePath: "Tests/Fixtures/bug-1234.jsonl"))
/// let clock = try log.testClock(at: 21, after: .seconds(5))   // 5 s after LSN 21 was written
/// let transport = ScriptedTransport(clock: clock)
/// let store = try log.makeStore(in: directory, through: 21,
///                               dependencies: .test(clock: clock, transport: transport))
/// #expect(try store.snapshot("todos").rows.count == 20)
/// ```
public struct ExportedLog: Sendable {
    /// The lines of the export, blank ones included (line numbers in errors count them).
    public let lines: [String]

    /// The log in `text` (one JSON object per line).
    public init(_ text: String) {
        lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) }
    }

    /// The log in the file at `url`.
    /// - Throws: the file system's error when the file cannot be read.
    public init(contentsOf url: URL) throws {
        self.init(String(decoding: try Data(contentsOf: url), as: UTF8.self))
    }

    /// The timestamp of record `lsn` (nil: the last record), from its `micros` field.
    /// - Throws: ``ToolError/invalidLine`` for a line that is not a JSON object with `lsn` and
    ///   `micros`; ``ToolError/pastEnd`` when no record has that LSN.
    public func time(at lsn: LSN? = nil) throws(ToolError) -> Date {
        var found: Date?
        for (index, line) in lines.enumerated() where !line.allSatisfy(\.isWhitespace) {
            let object: [String: Any]?
            do {
                object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            } catch {
                object = nil
            }
            guard let object, let number = object["lsn"] as? Int, let micros = object["micros"] as? Int else {
                throw ToolError(.invalidLine, "line \(index + 1): not a JSON object with lsn and micros")
            }
            let time = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
            if let lsn {
                if number == Int(lsn.rawValue) { return time }
            } else {
                found = time
            }
        }
        guard let found, lsn == nil else { throw ToolError(.pastEnd, "the exported log has no record \(lsn.map { "with LSN \($0)" } ?? "at all")") }
        return found
    }

    /// A ``TestClock`` that starts `after` the moment record `lsn` (nil: the last) was written,
    /// so timestamps, freshness and backoff continue from there.
    public func testClock(at lsn: LSN? = nil, after: Duration = .zero) throws(ToolError) -> TestClock {
        TestClock(start: try time(at: lsn).addingTimeInterval(Double(after.components.seconds) + Double(after.components.attoseconds) / 1e18))
    }

    /// Imports the log through `lsn` (nil: all of it) into `directory` — which must not exist
    /// or be empty — with the records' own LSNs and timestamps, and opens the store there for
    /// writing with `dependencies`, so the test can go on appending (the next event gets the
    /// LSN after `lsn`). Pending mutations in the imported part are sent as on any open unless
    /// `configuration.sendsMutations` is false.
    ///
    /// - Throws: ``ToolError`` from `Store.importLog(lines:into:through:)`; ``StoreError`` when
    ///   the new store cannot be opened.
    public func makeStore(in directory: URL, through lsn: LSN? = nil, configuration: Configuration = Configuration(), dependencies: Dependencies) throws -> Store {
        try Store.importLog(lines: lines, into: directory, through: lsn)
        return try Store(directory: directory, configuration: configuration, dependencies: dependencies)
    }
}
