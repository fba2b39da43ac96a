import Foundation

/// One (workload, engine) measurement in a process of its own, so its peak memory is its own.
/// It writes a ``Result`` as JSON to the file the parent named.
enum Child {
    struct Job: Sendable {
        var workload: String
        var engine: Engine
        /// Build the workload's stores (untimed) instead of measuring.
        var prepare: Bool
        var resultPath: String
    }

    struct Result: Codable, Sendable {
        /// Measured values by key (`value`, `p50`, `p99`, `dump-json`, …).
        var values: [String: Double] = [:]
        /// What the engine stored, for the agreement check (``Digest/text``).
        var digest: String?
        /// Peak resident memory of the process (bytes), and what it was before the timed part.
        var peakBytes = 0
        var peakBeforeBytes = 0
        /// Bytes of the store's files after the workload.
        var fileBytes = 0
        var notes: [String] = []
    }

    static func run(_ job: Job, options: Options) async -> Int32 {
        guard let work = options.workDirectory else {
            FileHandle.standardError.write(Data("freshet-bench: --child needs --work\n".utf8))
            return 2
        }
        do {
            let inputs = try Inputs.load(from: work)
            let workloads = Workloads(inputs: inputs, work: work, sizes: Sizes(smoke: options.smoke), engine: job.engine)
            var result = job.prepare ? Result() : try await workloads.measure(job.workload)
            if job.prepare { try await workloads.prepare(job.workload) }
            // A workload that runs diagnostics after its timed part records its peak before them.
            if result.peakBytes == 0 { result.peakBytes = Measure.peakRSS() }
            let data = try JSONEncoder().encode(result)
            try data.write(to: URL(fileURLWithPath: job.resultPath))
            return 0
        } catch {
            FileHandle.standardError.write(Data("freshet-bench: \(job.workload) \(job.engine.rawValue): \(error)\n".utf8))
            return 1
        }
    }
}

/// How big each workload is: the sizes, or small ones for `--smoke`.
struct Sizes: Sendable {
    var smoke: Bool
    /// Writes per task in W1 (the issue: 50; times `FRESHET_BENCH_REPEAT` for profiling).
    var w1Writes: Int { smoke ? 10 : Self.repeat * 50 }
    /// W2's and W2b's timed iterations per child, each on a fresh store after one untimed
    /// warm-up (enough that a child's median repeats within a few percent; docs/performance.md).
    var w2Iterations: Int { smoke ? 2 : Self.repeat * 60 }
    var w2bIterations: Int { smoke ? 1 : Self.repeat * 12 }
    /// `FRESHET_BENCH_W4_TRACE=1`: W4 prints one line per commit to standard error (``LatencyProbe/trace(engine:commit:)``).
    static let traceW4 = ProcessInfo.processInfo.environment["FRESHET_BENCH_W4_TRACE"] != nil
    /// `FRESHET_BENCH_W1_TRACE=1`: W1 notes how many writes shared each commit (``Workloads/describe(groupSizes:)``).
    static let traceW1 = ProcessInfo.processInfo.environment["FRESHET_BENCH_W1_TRACE"] != nil
    /// `FRESHET_BENCH_W7_TRACE=1`: W7 notes each store's B-trees with their pages and entries,
    /// not only their depths (``Workloads/w7Shapes(_:_:)``).
    static let traceW7 = ProcessInfo.processInfo.environment["FRESHET_BENCH_W7_TRACE"] != nil
    /// `FRESHET_BENCH_REPEAT=N` multiplies W1's writes, W2's and W2b's iterations and W3's rounds, so a
    /// profiler (`perf record` on one `--child` run) sees the timed work, not the start-up.
    static let `repeat`: Int = ProcessInfo.processInfo.environment["FRESHET_BENCH_REPEAT"].flatMap { Int($0) }.map { max(1, $0) } ?? 1
    var w3Rows: Int { smoke ? 1000 : 10_000 }
    var w3Iterations: Int { smoke ? 2 : Self.repeat * 5 }
    var w4Rows: Int { 100 }
    func w4Commits(observers: Int) -> Int { smoke ? 5 : (observers >= 1000 ? 50 : 200) }
    var w5Records: Int { smoke ? 10_000 : 1_000_000 }
    var w7Collections: Int { smoke ? 500 : 5000 }
    /// Writes per store per child (each store alternately first): with 300 the ratio of two
    /// medians of about 25 µs moved 1.05–1.11 between runs of one binary; with 1,000,
    /// 1.04–1.05 in three W7-only runs and 1.08 in a full run (docs/performance.md, round 5).
    var w7Writes: Int { smoke ? 20 : 1000 }
}
