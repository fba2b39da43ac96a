import Foundation
import Freshet

/// Runs `freshet` commands, writing to the given outputs; `main` is a thin shell around it.
public struct Tool {
    public var standardOutput: (String) -> Void
    public var standardError: (String) -> Void
    /// Where `verify` reads (see ``Containment``); the `freshet` binary uses a child process.
    public var containment: Containment
    /// When set, lines that `replay` copies from bytes (a printable row's line) and the lines of
    /// `dump --json` and `export` come here as their UTF-8, without a newline and valid for
    /// the call only, instead of as a `String` through ``standardOutput``; the order of all
    /// lines is kept, since both go to the same place. The `freshet` binary sets it to
    /// ``OutputWriter/writeLine(bytes:)``: such a line is then copied into the output buffer
    /// with no string made (issue 8's speed rounds 7 and 9).
    public var standardOutputBytes: ((UnsafeRawBufferPointer) -> Void)?

    public init(standardOutput: @escaping (String) -> Void, standardError: @escaping (String) -> Void, containment: Containment = .inProcess,
                standardOutputBytes: ((UnsafeRawBufferPointer) -> Void)? = nil) {
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.containment = containment
        self.standardOutputBytes = standardOutputBytes
    }

    /// Runs the command line and returns the exit status: 0 ok, 1 problem found (such as an
    /// unreadable record), 2 usage error or unreadable store. Errors are one line on standard error.
    public func run(_ arguments: [String]) -> Int32 {
        let command: Command
        do {
            command = try Command.parse(arguments)
        } catch {
            standardError("freshet: \(Self.errorText(error.message))")
            return 2
        }
        switch command {
        case .help(let topic):
            standardOutput(topic.flatMap { Command.helpTexts[$0] } ?? Command.usage)
            return 0
        case .version:
            standardOutput(Command.versionText)
            return 0
        case .dump(let options):
            return dump(options)
        case .replay(let options):
            return replay(options)
        case .verify(let options):
            return verify(options)
        case .stats(let options):
            return stats(options)
        case .export(let options):
            return export(options)
        case .why(let options):
            return why(options)
        case .importLog(let options):
            return importLog(options)
        case .compact(let options):
            return compact(options)
        }
    }

    /// Opens the store at `path` read-only (`MDB_RDONLY`, mutations never sent), or says why
    /// not on standard error and returns nil.
    func openReadOnly(_ path: String) -> Store? {
        do {
            var configuration = Configuration(durability: .relaxed)
            configuration.sendsMutations = false
            return try Store(directory: URL(fileURLWithPath: path), configuration: configuration, create: false)
        } catch {
            standardError("freshet: cannot open store \(path): \(Self.errorText(error.message))")
            return nil
        }
    }

    /// Says on standard error that `--collection VALUE` selected nothing.
    func reportNoMatch(_ value: String, in path: String) {
        standardError("freshet: no collection matches \(value.debugDescription) in \(path) (a prefix ends in / or *)")
    }

    /// An error message made safe for one line of standard error: as it is when it holds no
    /// character ``TerminalEscaping`` escapes other than `\` (names in it are already quoted
    /// with their escapes, `"a\u{7}b"`), else escaped whole (a server- or file-chosen string
    /// reached it raw). Past ``longestError`` characters the middle is cut with a visible
    /// ellipsis and the length left out, keeping the start (which names the line or record)
    /// and the end (which says what is wrong): a long string the library did not shorten
    /// itself (``CollectionFilter``'s names are) still gives one short line.
    static func errorText(_ message: String) -> String {
        let unquoted = message.replacingOccurrences(of: "\\", with: "")
        let text = TerminalEscaping.escaped(unquoted) == unquoted ? message : TerminalEscaping.escaped(message)
        guard text.count > longestError else { return text }
        let kept = (head: 600, tail: 200)
        return "\(text.prefix(kept.head))… (\(text.count - kept.head - kept.tail) characters left out) …\(text.suffix(kept.tail))"
    }

    /// Characters of an error line (after escaping) printed whole.
    static let longestError = 1_000

    /// Says on standard error which records a replay skipped (unreadable, or missing up to
    /// the point asked for), one line each; returns 1 when there is one, else 0.
    func reportSkipped(_ problems: [StoreProblem]) -> Int32 {
        for problem in problems { standardError("freshet: skipped: \(problem)") }
        return problems.isEmpty ? 0 : 1
    }

    /// Says on standard error that `--from LSN` is after the last record, as replay and why do; returns 2.
    func reportPastEnd(_ lsn: LSN, of store: Store, in path: String) -> Int32 {
        standardError("freshet: LSN \(lsn) is past the end of the log of \(path) (last LSN \(store.lastLSN))")
        return 2
    }

    func dump(_ options: Command.DumpOptions) -> Int32 {
        guard let store = openReadOnly(options.directory) else { return 2 }
        defer { store.close() }
        guard options.from <= max(store.lastLSN, LSN(1)) else { return reportPastEnd(options.from, of: store, in: options.directory) }
        if let to = options.to, to > store.lastLSN { return reportPastEnd(to, of: store, in: options.directory) }
        // A range compaction removed (all of it before the checkpoint) is refused like replay's.
        do {
            if let checkpoint = try store.latestCheckpoint(), let to = options.to, to <= checkpoint.throughLSN,
               !checkpoint.keptLSNs.contains(where: { $0 >= options.from && $0 <= to }) {
                standardError("freshet: LSNs \(options.from) ... \(to) of \(options.directory) are before the \(checkpoint): compaction removed them")
                return 2
            }
        } catch {
            standardError("freshet: reading \(options.directory): \(Self.errorText(error.message))")
            return 2
        }
        let filter = options.collection.map(CollectionFilter.init) ?? .all
        var problems = 0
        var matched = 0
        var gaps: [StoreProblem] = []
        // One buffer for every JSON line, handed over as bytes when the caller takes them: a
        // writer and a string per record were a fifth of `dump --json`.
        var line = JSONWriter(capacity: 512)
        do {
            try store.readLog(from: options.from, to: options.to, missing: { gaps.append($0) }) { entry in
                switch entry {
                case .record(let record):
                    guard filter.matches(record.collection) else { return true }
                    matched += 1
                    guard options.json else {
                        standardOutput(Self.textLine(record))
                        return true
                    }
                    line.bytes.removeAll(keepingCapacity: true)
                    record.writeJSON(into: &line)
                    if let standardOutputBytes {
                        line.bytes.withUnsafeBytes(standardOutputBytes)
                    } else {
                        standardOutput(line.string)
                    }
                case .unreadable(let lsn, let error):
                    problems += 1
                    if options.json {
                        standardOutput(LogRecord.unreadableJSONLine(lsn: lsn, message: error.message))
                    } else {
                        standardOutput("\(Self.pad(lsn.description, 6))  UNREADABLE  \(TerminalEscaping.escaped(error.message))")
                    }
                }
                return true
            }
        } catch {
            standardError("freshet: reading \(options.directory): \(Self.errorText("\(error)"))")
            return 2
        }
        if let value = options.collection, matched == 0 {
            // A collection that exists but has no record in the range is not "no match".
            let exists: Bool
            do {
                exists = try store.collections().contains(where: filter.matches)
            } catch {
                standardError("freshet: reading \(options.directory): \(Self.errorText(error.message))")
                return 2
            }
            if exists {
                standardError("freshet: no record of \(value.debugDescription) in LSNs \(options.from) ... \(options.to ?? store.lastLSN) of \(options.directory)")
            } else {
                reportNoMatch(value, in: options.directory)
            }
        }
        let missing = reportMissing(gaps, in: options.directory)
        if problems > 0 {
            standardError("freshet: \(Self.counted(problems, "unreadable record")) in \(options.directory)")
            return 1
        }
        return missing
    }

    /// Says on standard error which LSNs are missing from the log (``Store/readLog(from:to:collection:missing:_:)``),
    /// one line per gap naming the store: `freshet: DIR: log · LSN 4: LSN 4 is missing: the log
    /// jumps from 3 to 5`. Returns 1 when there is one, else 0.
    func reportMissing(_ gaps: [StoreProblem], in path: String) -> Int32 {
        for gap in gaps { standardError("freshet: \(path): \(gap)") }
        return gaps.isEmpty ? 0 : 1
    }

    static func textLine(_ r: LogRecord) -> String {
        // The collection name comes from the log file: escaped like the summary (one line, always).
        let collection = TerminalEscaping.escaped(r.collection)
        return "\(pad(r.lsn.description, 6))  \(LogRecord.iso8601(r.timestamp))  \(r.kind.name.padding(toLength: 18, withPad: " ", startingAt: 0)) \(collection.padding(toLength: max(14, collection.count), withPad: " ", startingAt: 0))  \(r.summary)"
    }

    /// `1 record`, `2 records`: a count and its noun, plural by the English `-s`.
    static func counted(_ n: Int, _ noun: String) -> String {
        "\(n) \(noun)\(n == 1 ? "" : "s")"
    }

    static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
    }
}
