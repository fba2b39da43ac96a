import Foundation
import Freshet
import ProcessSupport
#if canImport(Glibc)
import Glibc
#endif

/// The campaign: starts the child, kills it with SIGKILL at a random point, then opens the
/// store and checks it (see docs/reliability.md, "Stress").
///
/// After each kill: the store opens; `Store.verify` finds no problem; the part of the log that
/// existed before the run is unchanged after the latest checkpoint (at or below its `throughLSN`
/// only the records it keeps remain, unchanged); each writer task's new records are its attempts
/// in order, at the LSNs acknowledged; every acknowledged event is in the log or covered by the
/// checkpoint with its effect folded (SIGKILL kills the process, not the OS: no durability mode
/// may lose an acknowledged commit here, so the check is the same for all three);
/// `pendingMutations()` lists every proposal with no confirmation or rollback exactly once, in
/// LSN order.
struct Parent {
    struct Options {
        var mode = "short"
        var seed: UInt64 = UInt64.random(in: 1...999_999_999)
        var iterations = 40
        /// A fresh store every this many iterations (keeps `verify` quick in long runs).
        var freshEvery = 20
        /// The most child output lines read before the kill.
        var maxLines = 400
        /// Nil: each iteration draws one of the three modes.
        var durability: String?
        var directory: String?
        var keep = false
    }

    struct Figures {
        var iterations = 0
        var earlyKills = 0
        var attempted = 0
        var acknowledged = 0
        var acknowledgedByMode: [String: Int] = [:]
        var inDoubt = 0
        var lost = 0
        var proposals = 0
        var resolved = 0
        var pendingChecked = 0
        var recordsVerified = 0
        var stores = 0
        var compactionsAttempted = 0
        var checkpointsWritten = 0
        var compactionsIdle = 0
        var compactionsLocked = 0
        var killsDuringCompaction = 0
        var checksAfterCheckpoint = 0
        var coveredChecked = 0
    }

    struct Problem: Error, CustomStringConvertible {
        var description: String
    }

    var options: Options
    var figures = Figures()
    let random: RandomSource
    let executable: String

    static func durability(_ name: String) -> Configuration.Durability? {
        switch name {
        case "full": .full
        case "relaxed": .relaxed
        case "none": Configuration.Durability.none
        default: nil
        }
    }

    static func parse(_ arguments: [String]) throws(Problem) -> Options {
        var options = Options()
        var i = 0
        func value() throws(Problem) -> String {
            i += 1
            guard i < arguments.count else { throw Problem(description: "\(arguments[i - 1]) needs a value") }
            return arguments[i]
        }
        var iterations: Int?
        var freshEvery: Int?
        while i < arguments.count {
            switch arguments[i] {
            case "--mode":
                options.mode = try value()
                guard options.mode == "short" || options.mode == "long" else { throw Problem(description: "--mode is short or long") }
            case "--seed":
                guard let seed = UInt64(try value()) else { throw Problem(description: "--seed needs a number") }
                options.seed = seed
            case "--iterations":
                guard let n = Int(try value()), n > 0 else { throw Problem(description: "--iterations needs a positive number") }
                iterations = n
            case "--durability":
                let name = try value()
                guard durability(name) != nil else { throw Problem(description: "--durability is full, relaxed or none") }
                options.durability = name
            case "--fresh-every":
                guard let n = Int(try value()), n > 0 else { throw Problem(description: "--fresh-every needs a positive number") }
                freshEvery = n
            case "--directory": options.directory = try value()
            case "--keep": options.keep = true
            default: throw Problem(description: "unknown option \(arguments[i])")
            }
            i += 1
        }
        if options.mode == "long" {
            options.iterations = 2000
            options.freshEvery = 25
            options.maxLines = 800
        }
        if let iterations { options.iterations = iterations }
        if let freshEvery { options.freshEvery = freshEvery }
        return options
    }

    init(options: Options) {
        self.options = options
        self.random = RandomSource.seeded(options.seed)
        self.executable = URL(fileURLWithPath: CommandLine.arguments[0]).path
    }

    /// Runs every iteration; returns normally when nothing was lost or wrong.
    mutating func run() throws {
        let base = options.directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("freshet-stress-\(getpid())").path
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { if !options.keep && options.directory == nil { try? FileManager.default.removeItem(atPath: base) } }
        Self.say("freshet-stress: mode \(options.mode), seed \(options.seed), \(options.iterations) iterations, durability \(options.durability ?? "mixed"), in \(base)")
        var model = LogModel()
        var directory = ""
        for iteration in 0..<options.iterations {
            if iteration % options.freshEvery == 0 {
                if !directory.isEmpty, !options.keep { try FileManager.default.removeItem(atPath: directory) }
                directory = base + "/store-\(iteration)"
                model = LogModel()
                figures.stores += 1
            }
            do {
                try runIteration(iteration, directory: directory, model: &model)
            } catch {
                throw Problem(description: "iteration \(iteration) (seed \(options.seed), store \(directory)): \(error)")
            }
            figures.iterations += 1
            if (iteration + 1) % 100 == 0 {
                Self.say("freshet-stress: \(iteration + 1) iterations, \(figures.acknowledged) acknowledged, \(figures.lost) lost")
            }
        }
    }

    /// What the parent knows of the log: every record present after the last check, by LSN,
    /// and the mutations.
    struct LogModel {
        var records: [LSN: LogRecord] = [:]
        var lastLSN = LSN.zero
        /// Proposed mutation IDs with their proposals' LSNs, and those confirmed or rolled back.
        var proposed: [(lsn: LSN, id: String)] = []
        var resolved: Set<String> = []
    }

    /// One step a writer task attempted, from its `attempt` line, and the LSN its `ack` line gave.
    struct Attempt {
        var kind: String
        var key: String
        /// For a `localWrite`: the row ID it deletes, if any.
        var deletes: String?
        var ackLSN: LSN?
    }

    mutating func runIteration(_ iteration: Int, directory: String, model: inout LogModel) throws {
        let modeName = options.durability ?? ["full", "relaxed", "none"][Int(random.next() % 3)]
        let tasks = 1 + Int(random.next() % 4)
        let childSeed = random.next()
        let process = try SpawnedProcess(
            [executable, "child", directory, modeName, String(childSeed), String(iteration), String(tasks)],
            standardOutput: .pipe, standardError: .pipe)
        guard let fd = process.standardOutput else { preconditionFailure("standard output is a pipe") }

        // One in ten kills lands while the child is still starting or opening the store.
        var lines: [String] = []
        if random.next() % 10 == 0 {
            usleep(useconds_t(random.next() % 60_000))
            figures.earlyKills += 1
        } else {
            let killAfter = 1 + Int(random.next() % UInt64(options.maxLines))
            while lines.count < killAfter, let line = readLine(from: fd) {
                lines.append(String(decoding: line, as: UTF8.self))
            }
            // Let the child run on for up to 2 ms more: the kill lands inside a commit as often
            // as between two.
            usleep(useconds_t(random.next() % 2000))
        }
        process.signal(SIGKILL)
        let end = process.wait()
        // Lines written before the kill are still in the pipe.
        while let line = readLine(from: fd) { lines.append(String(decoding: line, as: UTF8.self)) }
        let stderr = process.readErrorLines().joined(separator: "\n")
        guard end == .signaled(SIGKILL) else {
            throw Problem(description: "the child ended with \(end) before the kill: \(stderr) \(lines.suffix(3))")
        }
        if let bad = lines.first(where: { $0.hasPrefix("error") }) { throw Problem(description: "the child reported \(bad)") }

        // What each task attempted and which of those were acknowledged.
        var attempts: [Int: [Attempt]] = [:]
        var acked: [Int: Int] = [:]
        for line in lines {
            let words = line.split(separator: " ").map(String.init)
            guard words.count >= 5, let task = Int(words[1]), let n = Int(words[2]) else { continue }
            if words[0] == "attempt" {
                guard attempts[task, default: []].count == n else { throw Problem(description: "task \(task) attempted step \(n) out of order") }
                let deletes = words.count > 5 && words[5] != "-" ? words[5] : nil
                attempts[task, default: []].append(Attempt(kind: words[3], key: words[4], deletes: deletes))
            } else if words[0] == "ack" {
                guard acked[task, default: 0] == n, n < attempts[task, default: []].count else {
                    throw Problem(description: "task \(task) acknowledged step \(n) out of order")
                }
                acked[task] = n + 1
                if words[3] == "compact" {
                    switch words.count == 7 ? "checkpoint" : words[5] {
                    case "checkpoint": figures.checkpointsWritten += 1
                    case "locked": figures.compactionsLocked += 1
                    default: figures.compactionsIdle += 1
                    }
                } else if words.count >= 6, let lsn = UInt64(words[5]) {
                    attempts[task]?[n].ackLSN = LSN(lsn)
                }
            }
        }
        // A kill that landed while a task was compacting: its last attempt is a compaction with no ack.
        let compacting = attempts.contains { task, tried in tried.last?.kind == "compact" && acked[task, default: 0] < tried.count }
        if compacting { figures.killsDuringCompaction += 1 }
        let attemptedCount = attempts.values.reduce(0) { $0 + $1.filter { $0.kind != "compact" }.count }
        let ackedCount = attempts.reduce(0) { sum, entry in sum + entry.value.prefix(acked[entry.key, default: 0]).filter { $0.kind != "compact" }.count }
        figures.compactionsAttempted += attempts.values.reduce(0) { $0 + $1.filter { $0.kind == "compact" }.count }
        figures.attempted += attemptedCount
        figures.acknowledged += ackedCount
        figures.acknowledgedByMode[modeName, default: 0] += ackedCount

        try check(directory: directory, model: &model, attempts: attempts, acked: acked)
    }

    /// Opens the store and checks it against the model and this run's attempts (see the type).
    mutating func check(directory: String, model: inout LogModel, attempts: [Int: [Attempt]], acked: [Int: Int]) throws {
        var configuration = Configuration(durability: .full)
        configuration.sendsMutations = false
        let store = try Store(directory: URL(fileURLWithPath: directory), configuration: configuration)
        defer { store.close() }
        let report = try store.verify()
        guard report.isOK else { throw Problem(description: "verify found \(report.problems.count) problems: \(report.problems.prefix(3))") }
        figures.recordsVerified += report.recordCount

        // The whole log, and its latest checkpoint.
        var log: [LSN: LogRecord] = [:]
        var order: [LSN] = []
        var checkpoint: (lsn: LSN, event: Event.Checkpoint)?
        var problem: String?
        try store.readLog { entry in
            guard case .record(let record) = entry else {
                problem = "LSN \(entry.lsn) is unreadable"
                return false
            }
            if case .checkpoint(let c) = record.event {
                checkpoint = (record.lsn, c)
            } else if Workload.key(of: record.event) == nil || Workload.task(ofCollection: record.collection) == nil {
                problem = "LSN \(record.lsn) (\(record.kind) in \(record.collection)) is nothing the child writes"
                return false
            }
            log[record.lsn] = record
            order.append(record.lsn)
            return true
        }
        if let problem { throw Problem(description: problem) }
        let through = checkpoint?.event.throughLSN ?? .zero
        let kept = Set(checkpoint?.event.keptLSNs ?? [])
        if checkpoint != nil { figures.checksAfterCheckpoint += 1 }

        // 3. The part of the log that existed before this run: unchanged after the latest
        // checkpoint; up to it, only records the checkpoint kept remain, with their LSNs and bytes.
        for (lsn, old) in model.records {
            if let now = log[lsn] {
                guard now == old else { throw Problem(description: "LSN \(lsn) changed: it held \(old.kind) in \(old.collection) before this run, now \(now.kind) in \(now.collection)") }
                if lsn <= through, !kept.contains(lsn) {
                    throw Problem(description: "LSN \(lsn) is covered by the checkpoint at LSN \(checkpoint?.lsn ?? .zero) but neither removed nor kept")
                }
            } else if lsn > through {
                throw Problem(description: "LSN \(lsn) (\(old.kind) in \(old.collection)) was in the log before this run and is gone, after the checkpoint (through LSN \(through))")
            }
        }
        for lsn in kept {
            guard let record = log[lsn], case .mutationProposed = record.event else {
                throw Problem(description: "the checkpoint keeps LSN \(lsn), which is not a proposal in the log")
            }
        }
        for lsn in order where lsn <= model.lastLSN && model.records[lsn] == nil {
            throw Problem(description: "LSN \(lsn) appeared below the end of the log before this run (LSN \(model.lastLSN))")
        }

        // 4. Each task's new records are attempts, in the order attempted (some may be removed,
        // covered by the checkpoint).
        var newKeys: [Int: [(lsn: LSN, step: Int)]] = [:]
        var next: [Int: Int] = [:]
        for lsn in order where lsn > model.lastLSN {
            guard let record = log[lsn], let key = Workload.key(of: record.event), let task = Workload.task(ofCollection: record.collection) else { continue }
            let kind = Self.kind(of: record.event)
            let tried = attempts[task] ?? []
            var step = next[task, default: 0]
            while step < tried.count, !(tried[step].kind == kind && tried[step].key == key) { step += 1 }
            guard step < tried.count else {
                throw Problem(description: "task \(task): LSN \(lsn) holds \(kind) \(key), which it did not attempt after its step \(next[task, default: 0] - 1)")
            }
            if let ack = tried[step].ackLSN, ack != lsn { throw Problem(description: "task \(task) step \(step): acknowledged as LSN \(ack), found at LSN \(lsn)") }
            newKeys[task, default: []].append((lsn, step))
            next[task] = step + 1
        }

        // 5. Every acknowledged event is in the log at its LSN, or covered by the checkpoint
        // with its effect in the folded state.
        for (task, count) in acked {
            let tried = attempts[task] ?? []
            let present = Set((newKeys[task] ?? []).map(\.step))
            for step in 0..<count where tried[step].kind != "compact" && !present.contains(step) {
                guard let lsn = tried[step].ackLSN else { throw Problem(description: "task \(task) step \(step): an ack line without an LSN") }
                guard lsn <= through else {
                    figures.lost += 1
                    throw Problem(description: "task \(task) step \(step): \(tried[step].kind) \(tried[step].key) acknowledged as LSN \(lsn), not in the log and not covered (checkpoint through LSN \(through)): lost")
                }
                try checkCovered(tried[step], step: step, of: tried, task: task, store: store)
                figures.coveredChecked += 1
            }
            figures.inDoubt += present.filter { $0 >= count }.count
        }

        // 6. The model follows the log; the queue must match it exactly.
        for lsn in order where lsn > model.lastLSN {
            guard let record = log[lsn], let key = Workload.key(of: record.event) else { continue }
            switch record.event {
            case .mutationProposed:
                model.proposed.append((lsn, key))
                figures.proposals += 1
            case .mutationConfirmed, .mutationRolledBack:
                model.resolved.insert(key)
                figures.resolved += 1
            default: break
            }
        }
        // Acknowledged events the checkpoint removed: the model learns them from the ack lines.
        for (task, tried) in attempts {
            for attempt in tried.prefix(acked[task, default: 0]) {
                guard let lsn = attempt.ackLSN, log[lsn] == nil, lsn > model.lastLSN else { continue }
                switch attempt.kind {
                case "propose": model.proposed.append((lsn, attempt.key)); figures.proposals += 1
                case "confirm", "rollBack": model.resolved.insert(attempt.key); figures.resolved += 1
                default: break
                }
            }
        }
        // A proposal the checkpoint removed was resolved before it (the pending ones are kept):
        // a resolution of it must have been attempted.
        let attemptedResolutions = Set(attempts.values.joined().filter { $0.kind == "confirm" || $0.kind == "rollBack" }.map(\.key))
        for (lsn, id) in model.proposed where lsn <= through && log[lsn] == nil && !model.resolved.contains(id) {
            guard attemptedResolutions.contains(id) else {
                throw Problem(description: "the checkpoint removed the proposal \(id) at LSN \(lsn), which nothing confirmed or rolled back")
            }
            model.resolved.insert(id)
        }
        model.proposed.sort { $0.lsn < $1.lsn }
        let expected = model.proposed.filter { !model.resolved.contains($0.id) }.map(\.id)
        let queued = try store.pendingMutations().map(\.id.description)
        guard queued == expected else {
            throw Problem(description: "pendingMutations lists \(queued.count) (\(Set(queued).count) distinct), the log says \(expected.count) are pending")
        }
        model.proposed.removeAll { model.resolved.contains($0.id) }
        figures.pendingChecked += queued.count
        model.records = log
        model.lastLSN = order.last ?? model.lastLSN
        // A kill while the store was first created leaves nothing behind once it has opened.
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        guard names == ["data.mdb", "lock.mdb"] else { throw Problem(description: "the store directory holds \(names)") }
    }

    /// An acknowledged event the checkpoint removed: its effect must be in the folded state.
    /// A `localWrite` row is there unless a later step of the task deletes it; a confirmation's
    /// server row is always there (nothing deletes `srv-…` rows). Proposals and resolutions are
    /// checked through the queue (check 6); a `fetched` page is replaced by the next one.
    func checkCovered(_ attempt: Attempt, step: Int, of tried: [Attempt], task: Int, store: Store) throws {
        let row: String
        switch attempt.kind {
        case "localWrite":
            guard !tried[(step + 1)...].contains(where: { $0.deletes == attempt.key }) else { return }
            row = attempt.key
        case "confirm":
            guard let tag = Self.tag(ofConfirm: step, of: tried, task: task) else { return }
            row = "srv-" + tag
        default: return
        }
        let rows = try store.snapshot(Workload.localCollection(task)).rows
        guard rows.contains(where: { $0.id == row }) else {
            throw Problem(description: "task \(task) step \(step): \(attempt.kind) \(attempt.key) is covered by the checkpoint, but row \(row) is not in \(Workload.localCollection(task))")
        }
    }

    /// The row tag a `confirm` step wrote (`i<iteration>-t<task>-n<step>`), from a neighbour's key.
    static func tag(ofConfirm step: Int, of tried: [Attempt], task: Int) -> String? {
        guard let sample = tried.first(where: { $0.kind == "localWrite" }), let range = sample.key.range(of: "-t\(task)-n") else { return nil }
        return String(sample.key[..<range.upperBound]) + String(step)
    }

    /// The step kind the child prints for an event.
    static func kind(of event: Event) -> String {
        switch event {
        case .localWrite: "localWrite"
        case .fetched: "fetch"
        case .mutationProposed: "propose"
        case .mutationConfirmed: "confirm"
        case .mutationRolledBack: "rollBack"
        default: "other"
        }
    }

    /// Prints a line at once (one write(2)), so progress shows while the run goes on.
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    func summary() -> String {
        let modes = figures.acknowledgedByMode.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return """
        freshet-stress: seed \(options.seed), mode \(options.mode)
          iterations (SIGKILLs)      \(figures.iterations) (\(figures.earlyKills) while starting), \(figures.stores) stores
          events attempted           \(figures.attempted)
          acknowledged events        \(figures.acknowledged) (\(modes))
          committed, not yet acked   \(figures.inDoubt)
          records verified           \(figures.recordsVerified)
          mutations proposed/resolved \(figures.proposals)/\(figures.resolved), pending checked \(figures.pendingChecked)
          compactions attempted      \(figures.compactionsAttempted): \(figures.checkpointsWritten) wrote a checkpoint, \(figures.compactionsIdle) found nothing to do, \(figures.compactionsLocked) overtaken (locked), \(figures.killsDuringCompaction) kills landed during one
          checks after a checkpoint  \(figures.checksAfterCheckpoint), acknowledged events covered and checked \(figures.coveredChecked)
          lost                       \(figures.lost)
        """
    }
}
