import Freshet

/// A parsed `freshet` command line.
///
/// `freshet dump DIR [--from LSN] [--to LSN] [--collection NAME] [--json]`
public enum Command: Equatable, Sendable {
    case dump(DumpOptions)
    case help

    public struct DumpOptions: Equatable, Sendable {
        public var directory: String
        public var from: LSN = LSN(1)
        public var to: LSN?
        public var collection: String?
        public var json = false

        public init(directory: String) { self.directory = directory }
    }

    /// A command line that cannot be run; printed as one line, exit status 2.
    public struct UsageError: Error, Equatable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    public static let usage = """
        usage: freshet dump DIR [--from LSN] [--to LSN] [--collection NAME] [--json]
          dump   one line per event (LSN, time, kind, collection, summary); --json for JSON Lines
        exit status: 0 ok, 1 problem found, 2 usage error or unreadable store
        """

    /// Parses the arguments after the program name.
    /// - Throws: ``UsageError`` for an unknown command or option, a missing value, or a bad LSN.
    public static func parse(_ arguments: [String]) throws(UsageError) -> Command {
        guard let name = arguments.first else { throw UsageError(message: "missing command; try `freshet help`") }
        var rest = arguments.dropFirst()
        switch name {
        case "help", "--help", "-h":
            return .help
        case "dump":
            var directory: String?
            var options = DumpOptions(directory: "")
            while let arg = rest.popFirst() {
                switch arg {
                case "--json": options.json = true
                case "--from": options.from = try lsn(value(for: arg, in: &rest), option: arg)
                case "--to": options.to = try lsn(value(for: arg, in: &rest), option: arg)
                case "--collection": options.collection = try value(for: arg, in: &rest)
                default:
                    if arg.hasPrefix("--") { throw UsageError(message: "dump: unknown option \(arg)") }
                    guard directory == nil else { throw UsageError(message: "dump: unexpected argument \(arg)") }
                    directory = arg
                }
            }
            guard let directory else { throw UsageError(message: "dump: missing store directory (freshet dump DIR)") }
            options.directory = directory
            return .dump(options)
        default:
            throw UsageError(message: "unknown command \(name.debugDescription); try `freshet help`")
        }
    }

    private static func value(for option: String, in rest: inout ArraySlice<String>) throws(UsageError) -> String {
        guard let v = rest.popFirst(), !v.hasPrefix("--") else { throw UsageError(message: "\(option) needs a value") }
        return v
    }

    private static func lsn(_ text: String, option: String) throws(UsageError) -> LSN {
        guard let v = UInt64(text) else { throw UsageError(message: "\(option) needs an LSN (a whole number), got \(text.debugDescription)") }
        return LSN(v)
    }
}
