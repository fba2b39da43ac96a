import Foundation
import ProcessSupport

/// One measured quantity of a workload: where it is in a child's result, how the table and
/// the JSON name it.
struct Output: Sendable {
    var key: String
    var label: String
    /// The workload name in `--json` output (issue 9's list); nil: table only.
    var json: String?
    var unit: String
    var higherIsBetter: Bool
    /// The engines that measure it (nil: all of the case's engines).
    var only: Set<Engine>?
}

/// A workload as the parent schedules it.
struct Case: Sendable {
    var id: String
    var group: String
    var engines: [Engine] = Engine.allCases
    /// Engines whose stores are built before the rounds (untimed).
    var prepare: [Engine] = []
    /// Measured in the first round only (long, read-only).
    var once = false
    var outputs: [Output]

    static func all(_ sizes: Sizes) -> [Case] {
        func w1(_ tasks: Int) -> Case {
            Case(id: "W1/\(tasks)", group: "W1", outputs: [Output(key: "value", label: "W1/\(tasks)", json: "W1/\(tasks)", unit: "writes/s", higherIsBetter: true)])
        }
        func w4(_ n: Int) -> Case {
            Case(id: "W4/\(n)", group: "W4", outputs: [
                Output(key: "p50", label: "W4/\(n)/p50", json: n == 1000 ? nil : "W4/\(n)/p50", unit: "ms", higherIsBetter: false),
                Output(key: "p99", label: "W4/\(n)/p99", json: "W4/\(n)/p99", unit: "ms", higherIsBetter: false),
            ])
        }
        return [
            w1(1), w1(8), w1(64),
            Case(id: "W1/64-relaxed", group: "W1", outputs: [Output(key: "value", label: "W1/64 relaxed", json: nil, unit: "writes/s", higherIsBetter: true)]),
            Case(id: "W2", group: "W2", outputs: [
                Output(key: "value", label: "W2", json: "W2", unit: "ms", higherIsBetter: false),
                Output(key: "cpu", label: "W2 CPU time", json: nil, unit: "ms", higherIsBetter: false),
                Output(key: "append", label: "W2 rows pre-extracted", json: nil, unit: "ms", higherIsBetter: false, only: [.freshet]),
            ]),
            Case(id: "W2b", group: "W2b", outputs: [
                Output(key: "value", label: "W2b", json: "W2b", unit: "MB/s", higherIsBetter: true),
                Output(key: "cpu", label: "W2b per CPU second", json: nil, unit: "MB/s", higherIsBetter: true),
                Output(key: "append", label: "W2b rows pre-extracted", json: nil, unit: "MB/s", higherIsBetter: true, only: [.freshet]),
            ]),
            Case(id: "W3", group: "W3", prepare: Engine.allCases, outputs: [Output(key: "value", label: "W3", json: "W3", unit: "ms", higherIsBetter: false)]),
            w4(1), w4(100), w4(1000),
            Case(id: "W5", group: "W5", engines: [.freshet, .lmdb], prepare: [.freshet], once: true, outputs: [
                Output(key: "replay", label: "W5/replay", json: "W5/replay", unit: "records/s", higherIsBetter: true, only: [.freshet]),
                Output(key: "verify", label: "W5/verify", json: "W5/verify", unit: "records/s", higherIsBetter: true, only: [.freshet]),
                Output(key: "dump-json", label: "W5/dump-json", json: "W5/dump-json", unit: "records/s", higherIsBetter: true, only: [.freshet]),
                Output(key: "export", label: "W5/export", json: "W5/export", unit: "records/s", higherIsBetter: true, only: [.freshet]),
                Output(key: "dump-text", label: "W5/dump-text", json: nil, unit: "records/s", higherIsBetter: true, only: [.freshet]),
                Output(key: "scan", label: "W5/scan", json: nil, unit: "records/s", higherIsBetter: true, only: [.freshet, .lmdb]),
            ]),
            // W7: one small write at 10 and at 5,000 collections, the stores holding the same
            // 50,000 rows in 5,000 records, so only the number of collections differs
            // (docs/performance.md, "W7 round 5"); issue 9's `W7/ratio`.
            Case(id: "W7-equal", group: "W7", prepare: Engine.allCases, outputs: [
                Output(key: "value", label: "W7/ratio", json: "W7/ratio", unit: "×", higherIsBetter: false),
                Output(key: "small", label: "W7/10 collections", json: nil, unit: "µs", higherIsBetter: false),
                Output(key: "large", label: "W7/\(sizes.w7Collections) collections", json: nil, unit: "µs", higherIsBetter: false),
            ]),
            // The first W7 shape: 10 rows a collection, so the larger store also holds 500 times
            // the rows and records (deeper row and log B-trees); table only.
            Case(id: "W7", group: "W7", prepare: Engine.allCases, outputs: [
                Output(key: "value", label: "W7/ratio, 10 rows a collection", json: nil, unit: "×", higherIsBetter: false),
                Output(key: "small", label: "W7/10 collections, 10 rows a collection", json: nil, unit: "µs", higherIsBetter: false),
                Output(key: "large", label: "W7/\(sizes.w7Collections) collections, 10 rows a collection", json: nil, unit: "µs", higherIsBetter: false),
            ]),
        ]
    }
}

/// Prepares inputs, runs the children round by round, checks that the engines agree, and
/// prints the table (and writes `--json`).
struct Runner {
    let options: Options

    func run() async -> Int32 {
        let work = options.workDirectory ?? FileManager.default.temporaryDirectory.appendingPathComponent("freshet-bench-\(UUID().uuidString)").path
        var childOptions = options
        childOptions.workDirectory = work
        let sizes = Sizes(smoke: options.smoke)
        let cases = Case.all(sizes).filter { options.only.isEmpty || options.only.contains($0.group) }
        defer {
            if !options.keep, options.workDirectory == nil {
                do { try FileManager.default.removeItem(atPath: work) } catch { print("freshet-bench: could not remove \(work): \(error)") }
            }
        }
        let started = Measure.now()
        do {
            try Inputs.prepare(in: work)
        } catch {
            print("freshet-bench: preparing inputs failed: \(error)")
            return 1
        }
        print("freshet-bench: \(options.smoke ? "smoke" : "full") run, \(options.rounds) round\(options.rounds == 1 ? "" : "s"), work directory \(work)")
        var failed: [String] = []
        for c in cases {
            for engine in c.prepare {
                if spawn(c.id, engine, prepare: true, work: work) == nil { failed.append("\(c.id) \(engine.rawValue) (prepare)") }
            }
        }
        var results: [String: [Engine: [Child.Result]]] = [:]
        for round in 0..<options.rounds {
            for c in cases where !(c.once && round > 0) {
                // Interleaved, and the engines' order rotates from round to round.
                let engines = (0..<c.engines.count).map { c.engines[($0 + round) % c.engines.count] }
                for engine in engines {
                    if let r = spawn(c.id, engine, prepare: false, work: work) {
                        results[c.id, default: [:]][engine, default: []].append(r)
                    } else {
                        failed.append("\(c.id) \(engine.rawValue)")
                    }
                }
            }
            print("freshet-bench: round \(round + 1) of \(options.rounds) done (\(Int(Measure.seconds(Measure.now() - started))) s)")
        }
        // Every engine must have stored the same rows in every round.
        var disagreements: [String] = []
        for c in cases {
            let digests = (results[c.id] ?? [:]).flatMap { engine, rs in rs.compactMap { $0.digest.map { (engine, $0) } } }
            if let first = digests.first, digests.contains(where: { $0.1 != first.1 }) {
                let seen = Dictionary(grouping: digests, by: { $0.0 }).map { "\($0.key.rawValue): \(Set($0.value.map(\.1)).sorted().joined(separator: " / "))" }.sorted()
                disagreements.append("\(c.id): engines disagree — \(seen.joined(separator: "; "))")
            }
        }
        let report = Report(cases: cases, results: results, sizes: sizes)
        print(report.table())
        print(report.resources())
        for line in report.notes() { print(line) }
        if let path = options.jsonPath {
            do {
                try report.json().write(to: URL(fileURLWithPath: path))
            } catch {
                print("freshet-bench: cannot write \(path): \(error)")
                failed.append("--json")
            }
        }
        for d in disagreements { print("freshet-bench: \(d)") }
        for f in failed { print("freshet-bench: failed: \(f)") }
        print("freshet-bench: \(disagreements.isEmpty && failed.isEmpty ? "all engines agree" : "PROBLEMS FOUND") (\(Int(Measure.seconds(Measure.now() - started))) s)")
        return disagreements.isEmpty && failed.isEmpty ? 0 : 1
    }

    /// Runs one child and reads its result; nil when it failed.
    private func spawn(_ workload: String, _ engine: Engine, prepare: Bool, work: String) -> Child.Result? {
        let out = "\(work)/result-\(UUID().uuidString).json"
        let executable = Bundle.main.executableURL?.path ?? CommandLine.arguments[0]
        let arguments = ["--child", workload, engine.rawValue, prepare ? "prepare" : "measure", out, "--work", work] + (options.smoke ? ["--smoke"] : [])
        do {
            guard try SpawnedProcess([executable] + arguments).wait() == .exited(0) else { return nil }
        } catch {
            print("freshet-bench: cannot start a child: \(error)")
            return nil
        }
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: out))
            try FileManager.default.removeItem(atPath: out)
            return try JSONDecoder().decode(Child.Result.self, from: data)
        } catch {
            print("freshet-bench: \(workload) \(engine.rawValue): unreadable result: \(error)")
            return nil
        }
    }
}
