import Foundation
import Freshet
import FreshetCommands
import Synchronization

/// A pokemon list entry, as an app would decode it (W3).
struct PokemonEntry: Decodable, Sendable {
    var name: String
    var url: String
}

/// The workloads of issue 9, for one engine. Each returns a ``Child/Result``.
struct Workloads: Sendable {
    let inputs: Inputs
    let work: String
    let sizes: Sizes
    let engine: Engine

    /// A fresh store directory for one measurement.
    private func freshDirectory(_ workload: String) -> String {
        let name = workload.replacingOccurrences(of: "/", with: "-")
        return "\(work)/stores/\(name)-\(engine.rawValue)-\(getpid())"
    }

    private func preparedDirectory(_ workload: String, _ suffix: String = "") -> String {
        "\(work)/prepared/\(workload)/\(engine.rawValue)\(suffix)"
    }

    private func open(_ directory: String, _ durability: Durability) throws -> any BenchStore {
        switch engine {
        case .freshet: try FreshetStore(directory: directory, durability: durability)
        case .lmdb: try LMDBStore(directory: directory, durability: durability)
        case .sqlite: try SQLiteStore(directory: directory, durability: durability)
        }
    }

    func prepare(_ workload: String) async throws {
        // A reused `--work` directory holds the last run's stores: start from empty ones, or
        // the workloads would add to them (W5 would read 2,000,000 records, not 1,000,000).
        let suffixes = workload.hasPrefix("W7") ? ["-10", "-\(sizes.w7Collections)"] : [""]
        for suffix in suffixes { remove(preparedDirectory(workload, suffix)) }
        switch workload {
        case "W3":
            let store = try open(preparedDirectory("W3"), .none)
            try await store.load([("w3", inputs.cycledRows(sizes.w3Rows))])
            store.close()
        case "W5":
            try await prepareLog()
        case "W7":
            for count in [10, sizes.w7Collections] {
                let store = try open(preparedDirectory("W7", "-\(count)"), .none)
                // FRESHET_BENCH_FLOOR_LAYOUT=equal-rows: as many rows at 10 collections as at 5,000.
                let rowsEach = LMDBStore.Layout.current.equalRows && count == 10 ? sizes.w7Collections * 10 / count : 10
                try await store.load((0..<count).map { (collection: "c\($0)", rows: inputs.cycledRows(rowsEach)) })
                store.close()
            }
        case "W7-equal":
            // The same 10 × w7Collections rows, in records of 10, in both stores; only how
            // many collections they are spread over differs (``equalDataBatches(_:collections:)``).
            let rows = inputs.cycledRows(sizes.w7Collections * 10)
            for count in [10, sizes.w7Collections] {
                let store = try open(preparedDirectory(workload, "-\(count)"), .none)
                try await store.load(Self.equalDataBatches(rows, collections: count), as: .upsert)
                store.close()
            }
        default:
            throw BenchError("\(workload) has nothing to prepare")
        }
    }

    func measure(_ workload: String) async throws -> Child.Result {
        switch workload {
        case "W1/1": try await w1(tasks: 1, durability: .full)
        case "W1/8": try await w1(tasks: 8, durability: .full)
        case "W1/64": try await w1(tasks: 64, durability: .full)
        case "W1/64-relaxed": try await w1(tasks: 64, durability: .relaxed)
        case "W2": try await w2()
        case "W2b": try await w2b()
        case "W3": try await w3()
        case "W4/1": try await w4(observers: 1)
        case "W4/100": try await w4(observers: 100)
        case "W4/1000": try await w4(observers: 1000)
        case "W5": try await w5()
        case "W7": try await w7("W7", digestAll: false)
        case "W7-equal": try await w7("W7-equal", digestAll: true)
        default: throw BenchError("unknown workload \(workload)")
        }
    }

    // MARK: W1 — N tasks × 50 durable small writes

    private func w1(tasks: Int, durability: Durability) async throws -> Child.Result {
        let directory = freshDirectory("W1-\(tasks)-\(durability)")
        defer { remove(directory) }
        let store = try open(directory, durability)
        let writes = sizes.w1Writes
        var result = Child.Result()
        result.peakBeforeBytes = Measure.peakRSS()
        let start = Measure.now()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for t in 0..<tasks {
                group.addTask {
                    for i in 0..<writes {
                        try await store.write(collection: "w1-\(t)", id: String(i), json: Array(#"{"i":\#(i),"task":\#(t)}"#.utf8))
                    }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = Measure.now() - start
        result.values["value"] = Double(tasks * writes) / Measure.seconds(elapsed)
        if Sizes.traceW1, let sizes = store.groupSizes { result.notes.append(Self.describe(groupSizes: sizes)) }
        result.digest = try store.digest((0..<tasks).map { "w1-\($0)" }).text
        store.close()
        result.fileBytes = Measure.directoryBytes(directory)
        return result
    }

    /// `FRESHET_BENCH_W1_TRACE`'s line: how many commits the writes took and how many writes
    /// shared a commit (percentiles over commits, and the share of writes in commits of each size).
    static func describe(groupSizes: [Int: Int]) -> String {
        let commits = groupSizes.values.reduce(0, +)
        let writes = groupSizes.reduce(0) { $0 + $1.key * $1.value }
        guard commits > 0 else { return "no commits" }
        let sorted = groupSizes.sorted { $0.key < $1.key }
        func percentile(_ p: Double) -> Int {
            let rank = Int((Double(commits - 1) * p).rounded())
            var seen = 0
            for (size, n) in sorted {
                seen += n
                if seen > rank { return size }
            }
            return sorted.last?.key ?? 0
        }
        let histogram = sorted.map { "\($0.key)×\($0.value)" }.joined(separator: " ")
        return "\(commits) commits for \(writes) writes (\(String(format: "%.1f", Double(writes) / Double(commits))) a commit); writes per commit p10 \(percentile(0.1)), p50 \(percentile(0.5)), p90 \(percentile(0.9)); [writes×commits] \(histogram)"
    }

    // MARK: W2 and W2b: each iteration on a store of its own

    /// Runs `body` on a new store in a directory of its own, then closes and removes it
    /// (untimed). W2 and W2b give every iteration a fresh store, not one store that grows:
    /// in this VM the first write to a page of guest memory costs a host fault (a file
    /// written into memory never touched before takes ~120 MB/s, into memory freed a moment
    /// ago 1–5 GB/s), so a growing store measures how much fresh memory the VM had — which
    /// changed medians 2–4× from run to run. A removed store's page-cache pages are what the
    /// next iteration writes into. Returns the store's file bytes, measured before removing it.
    @discardableResult
    private func withFreshStore(_ workload: String, _ body: (any BenchStore) async throws -> Void) async throws -> Int {
        let directory = freshDirectory(workload)
        defer { remove(directory) }
        let store = try open(directory, .none)
        do {
            try await body(store)
        } catch {
            store.close()
            throw error
        }
        store.close()
        return Measure.directoryBytes(directory)
    }

    /// What ``iterate(_:count:prepare:timed:last:)`` measured.
    private struct Iterations {
        /// Each timed iteration's wall time and process CPU time (ms).
        var wallMs: [Double] = []
        var cpuMs: [Double] = []
        var peaks = IterationPeaks()
        /// The store's files after the last iteration.
        var fileBytes = 0
    }

    /// One untimed warm-up iteration (code, allocator, page cache), then `count` timed ones,
    /// each on a fresh store (``withFreshStore(_:_:)``): `prepare` runs untimed, `timed` is
    /// measured (wall time, CPU time, peak memory), and on the last iteration `last` runs
    /// after it, untimed (digests, reads).
    private func iterate(_ workload: String, count: Int,
                         prepare: (any BenchStore) async throws -> Void,
                         timed: (any BenchStore) async throws -> Void,
                         last: (any BenchStore) async throws -> Void = { _ in }) async throws -> Iterations {
        var it = Iterations()
        for k in -1..<count {
            it.fileBytes = try await withFreshStore(workload) { store in
                try await prepare(store)
                it.peaks.begin()
                let cpuStart = Measure.cpuMs()
                let start = Measure.now()
                try await timed(store)
                let elapsed = Measure.ms(Measure.now() - start)
                let cpu = Measure.cpuMs() - cpuStart
                it.peaks.end()
                guard k >= 0 else { return }
                it.wallMs.append(elapsed)
                it.cpuMs.append(cpu)
                if k == count - 1 { try await last(store) }
            }
        }
        return it
    }

    /// Freshet's diagnostic for W2 and W2b: `append` (its storage work, the rows already
    /// extracted) timed on fresh stores like the workload; the wall milliseconds.
    private func freshetAppends(_ workload: String, count: Int, _ append: @escaping (Store) async throws -> Void) async throws -> [Double] {
        let it = try await iterate(workload, count: count, prepare: { store in
            guard let freshet = store as? FreshetStore else { return }
            try await freshet.store.append(.invalidated(Event.Invalidated()), to: "warm-up")
        }, timed: { store in
            guard let freshet = store as? FreshetStore else { return }
            try await append(freshet.store)
        })
        return it.wallMs
    }

    // MARK: W2 — fold one fetched 1,000-row list page

    private func w2() async throws -> Child.Result {
        var result = Child.Result()
        var extracted: [Row] = []
        let path = "/bench/page"
        let it = try await iterate("W2", count: sizes.w2Iterations, prepare: { store in
            store.stage(path: path, body: inputs.page)
            // A store's first commit (its first write transaction, timers it starts) is not
            // what W2 measures: one untimed fold into another collection first.
            try await store.foldPage(collection: "warm-up", path: path, body: inputs.page)
        }, timed: { store in
            try await store.foldPage(collection: "page", path: path, body: inputs.page)
        }, last: { store in
            let digest = try store.digest(["page"])
            guard digest.rows == Inputs.pageRows else { throw BenchError("W2 stored \(digest.rows) rows, not \(Inputs.pageRows)") }
            result.digest = digest.text
            if let freshet = store as? FreshetStore { extracted = try freshet.store.snapshot("page").rows }
        })
        result.values["value"] = Measure.median(it.wallMs)
        result.values["cpu"] = Measure.median(it.cpuMs)
        (result.peakBeforeBytes, result.peakBytes, result.fileBytes) = (it.peaks.before, it.peaks.peak, it.fileBytes)
        if engine == .freshet {
            // Diagnostic: the same page appended with its rows already extracted, so the table
            // shows Freshet's own storage work apart from turning the response into rows.
            let rows = extracted
            let times = try await freshetAppends("W2-append", count: sizes.w2Iterations) { store in
                let event = Event.fetched(Event.Fetched(placement: .page(index: 0, isLast: true), rows: rows, response: ResponseInfo(url: FreshetStore.baseURL + "/append", status: 200)))
                try await store.append(event, to: "append")
            }
            result.values["append"] = Measure.median(times)
        }
        return result
    }

    // MARK: W2b — fold 20 real detail documents

    private func w2b() async throws -> Child.Result {
        var result = Child.Result()
        var extracted: [Row] = []
        let megabytes = Double(inputs.documentBytes) / 1e6
        let it = try await iterate("W2b", count: sizes.w2bIterations, prepare: { store in
            for d in inputs.documents { store.stage(path: "/bench/doc/\(d.id)", body: d.body) }
            // As in W2: the store's first commit is untimed (the smallest document, elsewhere).
            if let d = inputs.documents.last {
                try await store.foldDocument(collection: "warm-up", path: "/bench/doc/\(d.id)", body: d.body)
            }
        }, timed: { store in
            for d in inputs.documents {
                try await store.foldDocument(collection: "details", path: "/bench/doc/\(d.id)", body: d.body)
            }
        }, last: { store in
            result.digest = try store.digest(["details"]).text
            if let freshet = store as? FreshetStore { extracted = try freshet.store.snapshot("details").rows }
        })
        result.values["value"] = Measure.median(it.wallMs.map { megabytes / ($0 / 1000) })
        result.values["cpu"] = Measure.median(it.cpuMs.map { megabytes / ($0 / 1000) })
        (result.peakBeforeBytes, result.peakBytes, result.fileBytes) = (it.peaks.before, it.peaks.peak, it.fileBytes)
        if engine == .freshet {
            // Diagnostic: the documents appended as already-extracted rows (storage work only).
            let rows = extracted
            let times = try await freshetAppends("W2b-append", count: sizes.w2bIterations) { store in
                for row in rows {
                    let event = Event.fetched(Event.Fetched(placement: .upsert, rows: [row], response: ResponseInfo(url: FreshetStore.baseURL + "/append", status: 200)))
                    try await store.append(event, to: "append")
                }
            }
            result.values["append"] = Measure.median(times.map { megabytes / ($0 / 1000) })
        }
        result.notes.append("input \(inputs.documentBytes) bytes")
        return result
    }

    // MARK: W3 — open + read 10,000 rows + decode to Decodable structs

    private func w3() async throws -> Child.Result {
        let directory = preparedDirectory("W3")
        var result = Child.Result()
        var times: [Double] = []
        result.peakBeforeBytes = Measure.peakRSS()
        for _ in 0..<sizes.w3Iterations {
            let start = Measure.now()
            let decoded = try openReadDecode(directory)
            times.append(Measure.ms(Measure.now() - start))
            guard decoded.count == sizes.w3Rows else { throw BenchError("W3 decoded \(decoded.count) rows, not \(sizes.w3Rows)") }
        }
        result.values["value"] = Measure.median(times)
        let store = try open(directory, .none)
        result.digest = try store.digest(["w3"]).text
        store.close()
        result.fileBytes = Measure.directoryBytes(directory)
        return result
    }

    private func openReadDecode(_ directory: String) throws -> [PokemonEntry] {
        switch engine {
        case .freshet:
            let store = try FreshetStore(directory: directory, durability: .none)
            defer { store.close() }
            return try store.store.snapshot("w3").decodeRows(PokemonEntry.self)
        case .lmdb:
            let store = try LMDBStore(directory: directory, durability: .none)
            defer { store.close() }
            let decoder = JSONDecoder()
            var out: [PokemonEntry] = []
            try store.forEachRow("w3") { _, json in out.append(try decoder.decode(PokemonEntry.self, from: Data(json))) }
            return out
        case .sqlite:
            let store = try SQLiteStore(directory: directory, durability: .none)
            defer { store.close() }
            let decoder = JSONDecoder()
            var out: [PokemonEntry] = []
            try store.forEachRow("w3") { _, json in out.append(try decoder.decode(PokemonEntry.self, from: Data(json))) }
            return out
        }
    }

    // MARK: W4 — commit → N observers

    private struct Delivery: Sendable {
        var lsn: UInt64
        var rows: [(id: String, json: [UInt8])]
    }

    private func w4(observers: Int) async throws -> Child.Result {
        let directory = freshDirectory("W4-\(observers)")
        defer { remove(directory) }
        let rows = inputs.cycledRows(sizes.w4Rows)
        let commits = sizes.w4Commits(observers: observers)
        let probe = LatencyProbe()
        let countdown = probe.countdown
        var result = Child.Result()
        let store = try open(directory, .none)
        try await store.load([("w4", rows)])
        var tasks: [Task<Void, Never>] = []
        var continuations: [AsyncStream<Delivery>.Continuation] = []
        if let freshet = store as? FreshetStore {
            let base = freshet.store.lastLSN.rawValue
            probe.expect(base)
            countdown.reset(observers)
            for _ in 0..<observers {
                tasks.append(Task {
                    var seen: UInt64 = 0
                    do {
                        for try await snapshot in freshet.store.observe("w4") { probe.received(snapshot.lsn.rawValue, &seen) }
                    } catch {
                        probe.failed("\(error)")
                    }
                })
            }
            await countdown.wait()
            probe.clear()
        } else {
            for _ in 0..<observers {
                let (stream, continuation) = AsyncStream<Delivery>.makeStream(bufferingPolicy: .bufferingNewest(1))
                continuations.append(continuation)
                tasks.append(Task {
                    var seen: UInt64 = 0
                    for await delivery in stream { probe.received(delivery.lsn, &seen) }
                })
            }
        }
        result.peakBeforeBytes = Measure.peakRSS()
        for i in 0..<commits {
            countdown.reset(observers)
            let lsn: UInt64 = if let freshet = store as? FreshetStore { freshet.store.lastLSN.rawValue + 1 } else { UInt64(i + 1) }
            probe.expect(lsn)
            try await store.write(collection: "w4", id: String(i % rows.count), json: inputs.listRows[(i * 7 + 3) % inputs.listRows.count].json)
            probe.wrote()
            switch engine {
            case .freshet:
                break // the store's observer hub delivers
            case .lmdb:
                // The floor: one read for all observers.
                let snapshot = Delivery(lsn: lsn, rows: try store.rows("w4"))
                for c in continuations { c.yield(snapshot) }
            case .sqlite:
                // As GRDB's ValueObservation does by default: each observation fetches its own value.
                for c in continuations { c.yield(Delivery(lsn: lsn, rows: try store.rows("w4"))) }
            }
            await countdown.wait()
            if Sizes.traceW4 { probe.trace(engine: "\(engine)", commit: i) }
        }
        let samples = probe.samples
        result.values["p50"] = Measure.percentile(samples, 50)
        result.values["p99"] = Measure.percentile(samples, 99)
        result.digest = try store.digest(["w4"]).text
        store.close()
        for c in continuations { c.finish() }
        for t in tasks { await t.value }
        if let f = probe.firstFailure { throw BenchError("an observer failed: \(f)") }
        result.fileBytes = Measure.directoryBytes(directory)
        return result
    }

    // MARK: W5 — replay, verify, dump --json, export on 1,000,000 records

    /// Builds a Freshet store whose log holds `w5Records` records: `localWrite`s of one real
    /// list row each, over 100 collections, appended 10,000 at a time.
    private func prepareLog() async throws {
        guard engine == .freshet else { return }
        let store = try FreshetStore(directory: preparedDirectory("W5"), durability: .none)
        defer { store.close() }
        let total = sizes.w5Records
        var done = 0
        while done < total {
            let n = min(10_000, total - done)
            let events = (done..<(done + n)).map { j -> (collection: String, event: Event) in
                let row = inputs.listRows[j % inputs.listRows.count]
                return ("w5-\(j % 100)", .localWrite(Event.RowChanges([.upsert(Row(id: row.id, json: Data(row.json)))])))
            }
            try await store.store.append(events)
            done += n
        }
    }

    private func w5() async throws -> Child.Result {
        let directory = "\(work)/prepared/W5/freshet"
        var result = Child.Result()
        let records = sizes.w5Records
        result.peakBeforeBytes = Measure.peakRSS()
        switch engine {
        case .freshet:
            result.values["dump-json"] = try toolRate(["dump", directory, "--json"], records: records)
            result.values["export"] = try toolRate(["export", directory], records: records)
            result.values["dump-text"] = try toolRate(["dump", directory], records: records)
            var configuration = Configuration(durability: .relaxed)
            configuration.sendsMutations = false
            let start = Measure.now()
            let store = try Store(directory: URL(fileURLWithPath: directory), configuration: configuration, create: false)
            var n = 0
            try store.readLog { entry in
                if case .record = entry { n += 1 }
                return true
            }
            store.close()
            guard n == records else { throw BenchError("readLog read \(n) records, not \(records)") }
            result.values["scan"] = Double(n) / Measure.seconds(Measure.now() - start)
            // `replay` prints every collection's rows at the end; `verify` also compares every
            // materialized database with the replayed one.
            for command in ["replay", "verify"] {
                result.values[command] = try toolRate([command, directory], records: records)
            }
        case .lmdb:
            let start = Measure.now()
            let store = try LMDBStore(directory: directory, durability: .none, readOnly: true)
            let scanned = try store.scanLog()
            store.close()
            guard scanned.records == records else { throw BenchError("raw scan read \(scanned.records) records, not \(records)") }
            result.values["scan"] = Double(scanned.records) / Measure.seconds(Measure.now() - start)
        case .sqlite:
            throw BenchError("W5 has no SQLite side")
        }
        result.fileBytes = Measure.directoryBytes(directory)
        return result
    }

    /// Records per second of a `freshet` command run through FreshetCommands' `Tool` (output
    /// discarded, lines counted); nil when this build's `freshet` has no such command.
    private func toolRate(_ arguments: [String], records: Int) throws -> Double? {
        do {
            _ = try Command.parse(arguments)
        } catch {
            return nil
        }
        let lines = LineCounter()
        let start = Measure.now()
        // Lines a command hands over as bytes (`replay`'s row lines, as the `freshet` binary
        // takes them: ``Tool/standardOutputBytes``) are counted as the others.
        let status = Tool(standardOutput: { _ in lines.count += 1 }, standardError: { lines.errors.append($0) },
                          standardOutputBytes: { _ in lines.count += 1 }).run(arguments)
        let elapsed = Measure.now() - start
        guard status == 0 else { throw BenchError("freshet \(arguments.joined(separator: " ")) exited \(status): \(lines.errors.joined(separator: "; "))") }
        return Double(records) / Measure.seconds(elapsed)
    }

    // MARK: W7 — one small write, 5,000 vs 10 collections

    /// W7's equal-data shape: `rows` (10 × the larger count) split evenly over `collections`
    /// collections `c0`, `c1`, … in order, each collection's share in records of 10 rows, one
    /// collection after another. With 10 collections: 500 records a collection; with 5,000:
    /// one. Both stores hold the same rows in the same number of records of the same size.
    static func equalDataBatches(_ rows: [(id: String, json: [UInt8])], collections: Int) -> [(collection: String, rows: [(id: String, json: [UInt8])])] {
        let each = rows.count / collections
        return (0..<collections).flatMap { c in
            stride(from: c * each, to: (c + 1) * each, by: 10).map { start in
                (collection: "c\(c)", rows: Array(rows[start..<min(start + 10, (c + 1) * each)]))
            }
        }
    }

    /// `workload` is `W7` (10 rows a collection: the 10-collection store holds 100 rows, the
    /// other 10 × as many as it has collections) or `W7-equal` (both stores hold the same rows
    /// and log records: ``equalDataBatches(_:collections:)``). Times `w7Writes` writes of a new
    /// row into `c0` of each store, alternately; `digestAll` checks every collection of both
    /// stores instead of the 10-collection store's `c0`. Notes each store's B-tree shapes
    /// after the writes (Freshet and the floor: ``LMDBStore/shapes(directory:names:)``).
    private func w7(_ workload: String, digestAll: Bool) async throws -> Child.Result {
        let smallDirectory = preparedDirectory(workload, "-10")
        let largeDirectory = preparedDirectory(workload, "-\(sizes.w7Collections)")
        let small = try open(smallDirectory, .none)
        let large = try open(largeDirectory, .none)
        var result = Child.Result()
        var smallTimes: [Double] = []
        var largeTimes: [Double] = []
        result.peakBeforeBytes = Measure.peakRSS()
        for i in 0..<sizes.w7Writes {
            // Alternate which store goes first, so neither always follows the other.
            let order = i % 2 == 0 ? [(small, true), (large, false)] : [(large, false), (small, true)]
            for (store, isSmall) in order {
                let start = Measure.now()
                try await store.write(collection: "c0", id: "w\(i)", json: inputs.listRows[i % inputs.listRows.count].json)
                let us = Measure.ms(Measure.now() - start) * 1000
                if isSmall { smallTimes.append(us) } else { largeTimes.append(us) }
            }
        }
        result.values["small"] = Measure.median(smallTimes)
        result.values["large"] = Measure.median(largeTimes)
        result.values["value"] = Measure.median(largeTimes) / Measure.median(smallTimes)
        if digestAll {
            // Reading every row back takes memory the writes did not: the peak is the writes'.
            result.peakBytes = Measure.peakRSS()
            let s = try small.digest((0..<10).map { "c\($0)" })
            let l = try large.digest((0..<sizes.w7Collections).map { "c\($0)" })
            result.digest = "\(s.text), \(l.text)"
        } else {
            result.digest = try small.digest(["c0"]).text
        }
        small.close()
        large.close()
        result.fileBytes = Measure.directoryBytes(largeDirectory)
        // The peak as the child would take it on return, before the shapes are read.
        if result.peakBytes == 0 { result.peakBytes = Measure.peakRSS() }
        if engine != .sqlite { result.notes.append(try w7Shapes(smallDirectory, largeDirectory)) }
        return result
    }

    /// W7's note on the two stores' B-trees: `depth log / rows / rowIndex / marks: 10
    /// collections 3 / 3 / 3 / 1, 5000 collections 3 / 3 / 3 / 2`; with `FRESHET_BENCH_W7_TRACE`
    /// also each tree's leaf and overflow pages and entries (one line per store, each child's).
    private func w7Shapes(_ smallDirectory: String, _ largeDirectory: String) throws -> String {
        let names = ["log", "rows", "rowIndex", "marks"]
        let stores = try [(10, smallDirectory), (sizes.w7Collections, largeDirectory)].map { count, directory in
            (count, try LMDBStore.shapes(directory: directory, names: names))
        }
        if Sizes.traceW7 {
            return stores.map { count, trees in
                "\(count) collections: " + trees.map { "\($0.name) depth \($0.depth) (\($0.leafPages) leaf, \($0.overflowPages) overflow pages, \($0.entries) entries)" }.joined(separator: ", ")
            }.joined(separator: "; ")
        }
        return "depth \(names.joined(separator: " / ")): " + stores.map { count, trees in
            "\(count) collections " + trees.map { String($0.depth) }.joined(separator: " / ")
        }.joined(separator: ", ")
    }

    private func remove(_ directory: String) {
        do {
            try FileManager.default.removeItem(atPath: directory)
        } catch {
            // A store that was never created has nothing to remove.
        }
    }
}

/// Observers' receive times for W4: the commit awaited (its LSN, or its number for the raw
/// engines) and when it started; each observer records its latency once per commit.
final class LatencyProbe: Sendable {
    private let clock = ContinuousClock()
    private let current: Mutex<(lsn: UInt64, at: ContinuousClock.Instant)>
    private let latencies = Mutex<[Double]>([])
    private let failures = Mutex<[String]>([])
    let countdown = Countdown()

    init() { current = Mutex((0, ContinuousClock.now)) }

    /// The next commit to wait for starts now.
    func expect(_ lsn: UInt64) { current.withLock { $0 = (lsn, clock.now) } }

    func received(_ lsn: UInt64, _ seen: inout UInt64) {
        let now = clock.now
        let (want, at) = current.withLock { ($0.lsn, $0.at) }
        guard lsn == want, seen != lsn else { return }
        seen = lsn
        latencies.withLock { $0.append(Measure.ms(now - at)) }
        countdown.arrive()
    }

    func clear() { latencies.withLock { $0 = [] } }

    // FRESHET_BENCH_W4_TRACE: one line per commit, to tell a slow commit (every observer
    // late) from a slow fan-out (the last observers late).
    private let written = Mutex<(ms: Double, traced: Int)>((0, 0))

    /// The commit's write returned (its duration is part of every latency of the commit).
    func wrote() {
        let at = current.withLock { $0.at }
        let ms = Measure.ms(clock.now - at)
        written.withLock { $0.ms = ms }
    }

    /// Writes to standard error the commit's write time and its observers' latencies
    /// (min, median, max, how many over 1 ms), in ms.
    func trace(engine: String, commit: Int) {
        let all = samples
        let (ms, from) = written.withLock { w -> (Double, Int) in
            defer { w.traced = all.count }
            return (w.ms, w.traced)
        }
        let s = all[min(from, all.count)...].sorted()
        guard let first = s.first, let last = s.last else { return }
        func f(_ v: Double) -> String { String(format: "%.3f", v) }
        let line = "W4 trace: \(engine) commit \(commit) write \(f(ms)) min \(f(first)) p50 \(f(s[s.count / 2])) max \(f(last)) over-1ms \(s.filter { $0 > 1 }.count)\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
    func failed(_ message: String) { failures.withLock { $0.append(message) } }
    var samples: [Double] { latencies.withLock { $0 } }
    var firstFailure: String? { failures.withLock { $0.first } }
}

/// Counts the lines a `Tool` writes (it runs synchronously on the calling thread).
final class LineCounter: @unchecked Sendable {
    var count = 0
    var errors: [String] = []
}
