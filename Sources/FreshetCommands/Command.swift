import Foundation
import Freshet

/// A parsed `freshet` command line (see ``Command/usage``).
public enum Command: Equatable, Sendable {
    case dump(DumpOptions)
    case replay(ReplayOptions)
    case verify(StoreOptions)
    case stats(StoreOptions)
    case export(ExportOptions)
    case why(WhyOptions)
    case importLog(ImportOptions)
    case compact(CompactOptions)
    /// `freshet help [COMMAND]`, `freshet COMMAND --help`: nil for the overview.
    case help(String?)
    case version

    public struct DumpOptions: Equatable, Sendable {
        public var directory: String
        public var from: LSN = LSN(1)
        public var to: LSN?
        public var collection: String?
        public var json = false

        public init(directory: String) { self.directory = directory }
    }

    public struct ReplayOptions: Equatable, Sendable {
        public var directory: String
        public var point: ReplayPoint = .end
        public var collection: String?
        public var json = false

        public init(directory: String) { self.directory = directory }
    }

    public struct WhyOptions: Equatable, Sendable {
        public var directory: String
        public var collection: String
        public var point: ReplayPoint = .end
        /// nil: the store's default (`.http`).
        public var policy: FreshnessPolicy?
        public var json = false
        /// Where to write the timeline as SVG, if anywhere.
        public var svg: String?

        public init(directory: String, collection: String) {
            self.directory = directory
            self.collection = collection
        }
    }

    public struct ExportOptions: Equatable, Sendable {
        public var directory: String
        public var from: LSN = LSN(1)
        /// Row fields to redact, from `--redact a,b,c`.
        public var redact: [String] = []

        public init(directory: String) { self.directory = directory }
    }

    public struct ImportOptions: Equatable, Sendable {
        /// The new store's directory.
        public var directory: String
        /// The JSON Lines file; `-` for standard input.
        public var file: String
        public var through: LSN?

        public init(directory: String, file: String) {
            self.directory = directory
            self.file = file
        }
    }

    public struct CompactOptions: Equatable, Sendable {
        public var directory: String
        /// `--keep DURATION`: the history window; nil: 7 days.
        public var keep: Duration?
        /// `--vacuum`: rewrite `data.mdb` without free pages afterwards.
        public var vacuum = false

        public init(directory: String) { self.directory = directory }
    }

    /// Options of the commands that take a store and nothing but `--json`.
    public struct StoreOptions: Equatable, Sendable {
        public var directory: String
        public var json = false

        public init(directory: String) { self.directory = directory }
    }

    /// A command line that cannot be run; printed as one line, exit status 2.
    public struct UsageError: Error, Equatable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// Parses the arguments after the program name.
    /// - Throws: ``UsageError`` for an unknown command or option, a missing value, a bad LSN or time.
    public static func parse(_ arguments: [String]) throws(UsageError) -> Command {
        guard let name = arguments.first else { throw UsageError(message: "missing command; try `freshet help`") }
        var rest = arguments.dropFirst()
        if name != "help", rest.contains(where: { $0 == "--help" || $0 == "-h" }) {
            guard helpTexts[name] != nil else { throw UsageError(message: "unknown command \(name.debugDescription); try `freshet help`") }
            return .help(name)
        }
        switch name {
        case "help", "--help", "-h":
            guard var topic = rest.popFirst() else { return .help(nil) }
            // `freshet help --help`: the usage of help itself, as for every other command.
            if topic == "--help" || topic == "-h" { topic = "help" }
            guard helpTexts[topic] != nil else { throw UsageError(message: "help: no command \(topic.debugDescription); try `freshet help`") }
            if let extra = rest.first { throw UsageError(message: "help: unexpected argument \(extra.debugDescription) (freshet help [COMMAND])") }
            return .help(topic)
        case "--version", "version":
            if let extra = rest.first { throw UsageError(message: "\(name): unexpected argument \(extra.debugDescription) (freshet --version)") }
            return .version
        case "dump":
            var options = DumpOptions(directory: "")
            options.directory = try parseOptions(name, &rest) { arg, rest throws(UsageError) in
                switch arg {
                case "--json": options.json = true
                case "--from": options.from = try positiveLSN(value(for: arg, in: &rest), option: arg)
                case "--to": options.to = try positiveLSN(value(for: arg, in: &rest), option: arg)
                case "--collection": options.collection = try collectionName(value(for: arg, in: &rest))
                default: return false
                }
                return true
            }
            if let to = options.to, options.from > to { throw UsageError(message: "dump: --from \(options.from) is after --to \(to)") }
            return .dump(options)
        case "replay":
            var options = ReplayOptions(directory: "")
            var pointSet = false
            options.directory = try parseOptions(name, &rest) { arg, rest throws(UsageError) in
                switch arg {
                case "--json": options.json = true
                case "--collection": options.collection = try collectionName(value(for: arg, in: &rest))
                case "--to", "--at":
                    guard !pointSet else { throw UsageError(message: "replay: give --to or --at once, not both") }
                    pointSet = true
                    let text = try value(for: arg, in: &rest)
                    options.point = arg == "--to" ? .lsn(try positiveLSN(text, option: arg)) : .time(try time(text, option: arg))
                default: return false
                }
                return true
            }
            return .replay(options)
        case "verify", "stats":
            var options = StoreOptions(directory: "")
            options.directory = try parseOptions(name, &rest) { arg, _ throws(UsageError) in
                guard arg == "--json" else { return false }
                options.json = true
                return true
            }
            return name == "verify" ? .verify(options) : .stats(options)
        case "why":
            var options = WhyOptions(directory: "", collection: "")
            var pointSet = false
            var positional: [String] = []
            var seen: Set<String> = []
            while let arg = rest.popFirst() {
                try once(name, arg, &seen)
                switch arg {
                case "--json": options.json = true
                case "--policy": options.policy = try policy(value(for: arg, in: &rest))
                case "--svg":
                    let path = try value(for: arg, in: &rest)
                    guard !path.isEmpty else { throw UsageError(message: "--svg needs a file name, got \"\"") }
                    options.svg = path
                case "--lsn", "--at":
                    guard !pointSet else { throw UsageError(message: "why: give --lsn or --at once, not both") }
                    pointSet = true
                    let text = try value(for: arg, in: &rest)
                    options.point = arg == "--lsn" ? .lsn(try positiveLSN(text, option: arg)) : .time(try time(text, option: arg))
                default:
                    if isOption(arg) { throw UsageError(message: "why: unknown option \(arg); try `freshet help why`") }
                    positional.append(arg)
                }
            }
            if positional.count > 2 { throw UsageError(message: "why: unexpected argument \(positional[2].debugDescription)") }
            guard positional.count == 2 else { throw UsageError(message: "why: needs a store directory and a collection (freshet why DIR COLLECTION)") }
            options.directory = try nonEmptyStorePath(name, positional[0])
            options.collection = try collectionName(positional[1])
            return .why(options)
        case "export":
            var options = ExportOptions(directory: "")
            options.directory = try parseOptions(name, &rest) { arg, rest throws(UsageError) in
                switch arg {
                case "--from": options.from = try positiveLSN(value(for: arg, in: &rest), option: arg)
                case "--redact":
                    let text = try value(for: arg, in: &rest)
                    let names = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
                    guard !names.contains(where: \.isEmpty) else { throw UsageError(message: "--redact needs field names separated by commas, got \(text.debugDescription)") }
                    options.redact = names
                default: return false
                }
                return true
            }
            return .export(options)
        case "import":
            var through: LSN?
            var positional: [String] = []
            var seen: Set<String> = []
            while let arg = rest.popFirst() {
                try once(name, arg, &seen)
                if arg == "--through" {
                    through = try positiveLSN(value(for: arg, in: &rest), option: arg)
                } else if isOption(arg) {
                    throw UsageError(message: "import: unknown option \(arg); try `freshet help import`")
                } else {
                    positional.append(arg)
                }
            }
            if positional.count > 2 { throw UsageError(message: "import: unexpected argument \(positional[2].debugDescription)") }
            guard positional.count == 2 else { throw UsageError(message: "import: needs a new store directory and a JSON Lines file (freshet import DIR FILE, - for standard input)") }
            var options = ImportOptions(directory: try nonEmptyStorePath(name, positional[0]), file: positional[1])
            options.through = through
            return .importLog(options)
        case "compact":
            var options = CompactOptions(directory: "")
            options.directory = try parseOptions(name, &rest) { arg, rest throws(UsageError) in
                switch arg {
                case "--keep": options.keep = try duration(value(for: arg, in: &rest), option: arg)
                case "--vacuum": options.vacuum = true
                default: return false
                }
                return true
            }
            return .compact(options)
        default:
            throw UsageError(message: "unknown command \(name.debugDescription); try `freshet help`")
        }
    }

    /// A duration: a whole number with a unit, `s`, `m`, `h` or `d` (`90m`, `7d`), or `0`.
    static func duration(_ text: String, option: String) throws(UsageError) -> Duration {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        if text == "0" { return .zero }
        if let unit = text.last, let scale = units[unit], let n = Int64(text.dropLast()), n >= 0 {
            let (seconds, overflow) = n.multipliedReportingOverflow(by: scale)
            if !overflow { return .seconds(seconds) }
        }
        throw UsageError(message: "\(option) needs a duration such as 7d, 12h, 90m, 30s or 0, got \(text.debugDescription)")
    }

    /// Walks the arguments of `command`, handing options to `option` (which returns false for
    /// one it does not know) and returning the one store directory.
    private static func parseOptions(_ command: String, _ rest: inout ArraySlice<String>,
                                     _ option: (String, inout ArraySlice<String>) throws(UsageError) -> Bool) throws(UsageError) -> String {
        var directory: String?
        var seen: Set<String> = []
        while let arg = rest.popFirst() {
            try once(command, arg, &seen)
            if isOption(arg) {
                guard try option(arg, &rest) else { throw UsageError(message: "\(command): unknown option \(arg); try `freshet help \(command)`") }
                continue
            }
            guard directory == nil else { throw UsageError(message: "\(command): unexpected argument \(arg.debugDescription)") }
            directory = arg
        }
        guard let directory else { throw UsageError(message: "\(command): missing store directory (freshet \(command) DIR)") }
        return try nonEmptyStorePath(command, directory)
    }

    /// ``storePath(_:)`` of a typed directory that is not `""`: an empty argument (an unset
    /// shell variable) would otherwise name the current directory.
    private static func nonEmptyStorePath(_ command: String, _ typed: String) throws(UsageError) -> String {
        guard !typed.isEmpty else { throw UsageError(message: "\(command): the store directory is empty (\"\"); give a path, . for the current directory") }
        return storePath(typed)
    }

    /// A store directory as typed, spelled as `URL(fileURLWithPath:).relativePath` spells it
    /// (relative stays relative and `..` stays; a trailing `/`, as shell completion adds, is
    /// dropped): the name the library's messages use too (`Store.displayPath`), so every
    /// line of every command names the store the same way.
    static func storePath(_ typed: String) -> String {
        typed.isEmpty ? typed : URL(fileURLWithPath: typed).relativePath
    }

    /// Refuses an option given a second time (`replay: --to given twice`): the later one
    /// would silently win. Arguments that are not options pass.
    private static func once(_ command: String, _ arg: String, _ seen: inout Set<String>) throws(UsageError) {
        guard isOption(arg) else { return }
        guard seen.insert(arg).inserted else { throw UsageError(message: "\(command): \(arg) given twice") }
    }

    /// A collection name or `--collection` value, checked as the store checks names
    /// (``CollectionFilter/checkName(_:)``): `""` is refused in import's words.
    private static func collectionName(_ text: String) throws(UsageError) -> String {
        do {
            try CollectionFilter.checkName(text)
        } catch {
            throw UsageError(message: error.message)
        }
        return text
    }

    /// An LSN that names a record: every LSN option (`--from`, `--to`, `--lsn`, `--through`;
    /// LSN 0 is before the first record).
    private static func positiveLSN(_ text: String, option: String) throws(UsageError) -> LSN {
        let value = try lsn(text, option: option)
        guard value != .zero else { throw UsageError(message: "\(option) needs an LSN from 1 (LSN 0 is before the first record), got \(text)") }
        return value
    }

    /// `-x` and `--x` are options (known or not); `-` alone is an argument (standard input).
    private static func isOption(_ arg: String) -> Bool {
        arg.hasPrefix("-") && arg != "-"
    }

    private static func value(for option: String, in rest: inout ArraySlice<String>) throws(UsageError) -> String {
        guard let v = rest.popFirst(), !v.hasPrefix("--") else { throw UsageError(message: "\(option) needs a value") }
        return v
    }

    private static func lsn(_ text: String, option: String) throws(UsageError) -> LSN {
        // Digits only: `UInt64("+5")` would accept a sign the tools never print.
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            throw UsageError(message: "\(option) needs an LSN (a whole number), got \(text.debugDescription)")
        }
        // At most Int64.max, as `import` reads an LSN (a JSON integer): one range in every tool.
        guard let v = UInt64(text), v <= UInt64(Int64.max) else {
            throw UsageError(message: "\(option) \(text) is out of range: an LSN is at most \(Int64.max)")
        }
        return LSN(v)
    }

    /// `http`, `always`, `manual` or `maxAge=SECONDS`.
    private static func policy(_ text: String) throws(UsageError) -> FreshnessPolicy {
        switch text {
        case "http": return .http
        case "always": return .always
        case "manual": return .manual
        default:
            if text.hasPrefix("maxAge="), let seconds = Int(text.dropFirst(7)), seconds >= 0 { return .maxAge(.seconds(seconds)) }
            throw UsageError(message: "--policy needs http, always, manual or maxAge=SECONDS, got \(text.debugDescription)")
        }
    }

    /// An ISO 8601 time with a zone (`2026-01-01T00:00:05Z`, fractional seconds allowed) that
    /// names a real moment (``calendarProblem(in:)``: no February 30, no second 60).
    private static func time(_ text: String, option: String) throws(UsageError) -> Date {
        let refusal = "\(option) needs an ISO 8601 time such as 2026-01-01T00:00:05Z, got \(text.debugDescription)"
        if let problem = calendarProblem(in: text) { throw UsageError(message: "\(refusal): \(problem)") }
        for style in [Date.ISO8601FormatStyle(includingFractionalSeconds: true), Date.ISO8601FormatStyle()] {
            do {
                // Printed and compared by its microsecond (LogRecord.printedMillisecond), so a
                // Double just under .464 still reads back as .464.
                return try style.parse(text)
            } catch {
                continue
            }
        }
        throw UsageError(message: refusal)
    }
}
