import Foundation

/// The command line, parsed by hand.
struct Options: Sendable {
    enum Mode: Sendable {
        case help
        case run
        case child(Child.Job)
    }

    var mode: Mode = .run
    var smoke = false
    var rounds = 5
    var jsonPath: String?
    /// Only these workload groups (`W1`, `W2`, `W2b`, `W3`, `W4`, `W5`, `W7`); empty: all.
    var only: Set<String> = []
    /// Where inputs and stores go; a fresh temporary directory when nil.
    var workDirectory: String?
    var keep = false

    struct UsageError: Error {
        var message: String
    }

    static let usage = """
        usage: freshet-bench [--smoke] [--rounds N] [--json FILE] [--only W1,W2,...] [--work DIR] [--keep]
          --smoke     every workload small (under a minute); checks that the engines agree
          --rounds N  interleaved rounds; the table shows medians (default 5, smoke 1)
          --json FILE write [{workload, engine, value, unit, better}] to FILE
          --only LIST run only these workload groups (W1 W2 W2b W3 W4 W5 W7); W7 is one small
                      write at 10 and at 5,000 collections, twice: with equal data (both stores
                      50,000 rows in 5,000 records; W7/ratio) and with 10 rows a collection
          --work DIR  put inputs and stores in DIR (default: a new temporary directory)
          --keep      keep the work directory
        environment (docs/performance.md): FRESHET_BENCH_REPEAT=N multiplies W1, W2, W2b and W3
          iterations (for profiling one --child run); FRESHET_BENCH_W4_TRACE=1 prints one line
          per W4 commit (write time, observers' min/median/max latency) to standard error;
          FRESHET_BENCH_W1_TRACE=1 notes how many writes shared each W1 commit (group commit);
          FRESHET_BENCH_W7_TRACE=1 notes each W7 store's B-trees with pages and entries (not
          only their depths);
          FRESHET_BENCH_FLOOR_LAYOUT=WORD,... (mark-in-rows, writemap, equal-rows) changes the floor's
          layout and (equal-rows) the prepare of W7 with 10 rows a collection, not of W7/ratio
          (docs/performance.md, "W7 round 2: layouts measured on the floor")
        exit status: 0 ok, 1 engines disagree or a workload failed, 2 usage
        """

    static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        var o = Options()
        var rest = arguments[...]
        var roundsGiven = false
        func value(_ option: String) throws(UsageError) -> String {
            guard let v = rest.popFirst() else { throw UsageError(message: "\(option) needs a value") }
            return v
        }
        while let arg = rest.popFirst() {
            switch arg {
            case "--help", "-h": o.mode = .help
            case "--smoke": o.smoke = true
            case "--keep": o.keep = true
            case "--rounds":
                let v = try value(arg)
                guard let n = Int(v), n >= 1 else { throw UsageError(message: "--rounds needs a whole number ≥ 1, got \(v)") }
                o.rounds = n
                roundsGiven = true
            case "--json": o.jsonPath = try value(arg)
            case "--work": o.workDirectory = try value(arg)
            case "--only": o.only = Set(try value(arg).split(separator: ",").map(String.init))
            case "--child":
                let workload = try value(arg)
                let engine = try value(arg)
                guard let e = Engine(rawValue: engine) else { throw UsageError(message: "unknown engine \(engine)") }
                let phase = try value(arg)
                let out = try value(arg)
                o.mode = .child(Child.Job(workload: workload, engine: e, prepare: phase == "prepare", resultPath: out))
            default: throw UsageError(message: "unknown argument \(arg)")
            }
        }
        _ = try LMDBStore.Layout.parse(ProcessInfo.processInfo.environment["FRESHET_BENCH_FLOOR_LAYOUT"])
        if o.smoke && !roundsGiven { o.rounds = 1 }
        return o
    }
}

/// The engines compared.
enum Engine: String, Sendable, CaseIterable, Codable {
    case freshet
    case lmdb
    case sqlite
}

/// How hard a commit works to reach the disk, mapped onto each engine: Freshet's
/// `Configuration.Durability`, LMDB's flags (none / `MDB_NOMETASYNC` / `MDB_NOSYNC`) and
/// SQLite's `PRAGMA synchronous` in WAL mode (FULL / NORMAL / OFF).
enum Durability: String, Sendable {
    case full
    case relaxed
    case none
}
