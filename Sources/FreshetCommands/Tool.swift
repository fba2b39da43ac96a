import Foundation
import Freshet

/// Runs `freshet` commands, writing to the given outputs; `main` is a thin shell around it.
public struct Tool {
    public var standardOutput: (String) -> Void
    public var standardError: (String) -> Void

    public init(standardOutput: @escaping (String) -> Void, standardError: @escaping (String) -> Void) {
        self.standardOutput = standardOutput
        self.standardError = standardError
    }

    /// Runs the command line and returns the exit status: 0 ok, 1 problem found (such as an
    /// unreadable record), 2 usage error or unreadable store. Errors are one line on standard error.
    public func run(_ arguments: [String]) -> Int32 {
        let command: Command
        do {
            command = try Command.parse(arguments)
        } catch {
            standardError("freshet: \(error.message)")
            return 2
        }
        switch command {
        case .help:
            standardOutput(Command.usage)
            return 0
        case .dump(let options):
            return dump(options)
        }
    }

    func dump(_ options: Command.DumpOptions) -> Int32 {
        let store: Store
        do {
            var configuration = Configuration(durability: .relaxed)
            configuration.sendsMutations = false
            store = try Store(directory: URL(fileURLWithPath: options.directory), configuration: configuration, create: false)
        } catch {
            standardError("freshet: cannot open store \(options.directory): \(error.message)")
            return 2
        }
        defer { store.close() }
        var problems = 0
        do {
            try store.readLog(from: options.from, to: options.to, collection: options.collection) { entry in
                switch entry {
                case .record(let record):
                    standardOutput(options.json ? record.jsonLine : Self.textLine(record))
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
            standardError("freshet: reading \(options.directory): \(error)")
            return 2
        }
        if problems > 0 {
            standardError("freshet: \(problems) unreadable record\(problems == 1 ? "" : "s") in \(options.directory)")
            return 1
        }
        return 0
    }

    static func textLine(_ r: LogRecord) -> String {
        // The collection name comes from the log file: escaped like the summary (one line, always).
        let collection = TerminalEscaping.escaped(r.collection)
        return "\(pad(r.lsn.description, 6))  \(LogRecord.iso8601(r.timestamp))  \(r.kind.name.padding(toLength: 18, withPad: " ", startingAt: 0)) \(collection.padding(toLength: max(14, collection.count), withPad: " ", startingAt: 0))  \(r.summary)"
    }

    static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
    }
}
