import Foundation
import Freshet
import ProcessSupport
#if canImport(Glibc)
import Glibc
#endif

/// The campaign: starts the child, kills it with SIGKILL at a random point, then opens the
/// store and checks it (see docs/reliability.md, "Stress").
///
/// After each kill: the store opens; `Store.verify` finds no problem; every writer task's
/// records in the new part of the log are a prefix of what it attempted, in order, and include
/// everything acknowledged (SIGKILL kills the process, not the OS: no durability mode may lose
/// an acknowledged commit here, so the check is the same for all three); the part of the log
/// that existed before the run is unchanged; `pendingMutations()` lists every proposal with no
/// confirmation or rollback in the log exactly once, in LSN order.
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

    /// What the parent knows of the log: every record's key in LSN order, and the mutations.
    struct LogModel {
        var keys: [String] = []
        var lastLSN = LSN.zero
        /// Proposed mutation IDs in LSN order, and those confirmed or rolled back.
        var proposed: [String] = []
        var resolved: Set<String> = []
    }

    mutating func runIteration(_ iteration: Int, directory: String, model: inout LogModel) throws {
        let modeName = options.durability ?? ["full", "relaxed", "none"][Int(random.next() % 3)]
        let tasks = 1 + Int(random.next() % 4)
        let childSeed = random.next()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["child", directory, modeName, String(childSeed), String(iteration), String(tasks)]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let fd = output.fileHandleForReading.fileDescriptor

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
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        // Lines written before the kill are still in the pipe.
        while let line = readLine(from: fd) { lines.append(String(decoding: line, as: UTF8.self)) }
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard process.terminationReason == .uncaughtSignal, process.terminationStatus == SIGKILL else {
            throw Problem(description: "the child ended with status \(process.terminationStatus) before the kill: \(stderr) \(lines.suffix(3))")
        }
        if let bad = lines.first(where: { $0.hasPrefix("error") }) { throw Problem(description: "the child reported \(bad)") }

        // What each task attempted and which of those were acknowledged.
        var attempts: [Int: [String]] = [:]
        var acked: [Int: Int] = [:]
        for line in lines {
            let words = line.split(separator: " ").map(String.init)
            guard words.count >= 5, let task = Int(words[1]), let n = Int(words[2]) else { continue }
            if words[0] == "attempt" {
                guard attempts[task, default: []].count == n else { throw Problem(description: "task \(task) attempted step \(n) out of order") }
                attempts[task, default: []].append(words[4])
            } else if words[0] == "ack" {
                guard acked[task, default: 0] == n else { throw Problem(description: "task \(task) acknowledged step \(n) out of order") }
                acked[task] = n + 1
            }
        }
        let attemptedCount = attempts.values.reduce(0) { $0 + $1.count }
        let ackedCount = acked.values.reduce(0, +)
        figures.attempted += attemptedCount
        figures.acknowledged += ackedCount
        figures.acknowledgedByMode[modeName, default: 0] += ackedCount

        try check(directory: directory, model: &model, attempts: attempts, acked: acked)
    }

    /// Opens the store and checks it against the model and this run's attempts (see the type).
    mutating func check(directory: String, model: inout LogModel, attempts: [Int: [String]], acked: [Int: Int]) throws {
        var configuration = Configuration(durability: .full)
        configuration.sendsMutations = false
        let store = try Store(directory: URL(fileURLWithPath: directory), configuration: configuration)
        defer { store.close() }
        let report = try store.verify()
        guard report.isOK else { throw Problem(description: "verify found \(report.problems.count) problems: \(report.problems.prefix(3))") }
        figures.recordsVerified += report.recordCount

        // The log: the old part unchanged, the new part a prefix of each task's attempts.
        var index = 0
        var newKeys: [Int: [String]] = [:]
        var newRecords: [LogRecord] = []
        var problem: String?
        try store.readLog { entry in
            guard case .record(let record) = entry else {
                problem = "LSN \(entry.lsn) is unreadable"
                return false
            }
            guard let key = Workload.key(of: record.event), let task = Workload.task(ofCollection: record.collection) else {
                problem = "LSN \(record.lsn) (\(record.kind) in \(record.collection)) is nothing the child writes"
                return false
            }
            if index < model.keys.count {
                if model.keys[index] != key {
                    problem = "LSN \(record.lsn) holds \(key), where the log held \(model.keys[index]) before this run"
                    return false
                }
            } else {
                newKeys[task, default: []].append(key)
                newRecords.append(record)
            }
            index += 1
            return true
        }
        if let problem { throw Problem(description: problem) }
        guard index >= model.keys.count else { throw Problem(description: "the log has \(index) records; it had \(model.keys.count) before this run") }
        for (task, keys) in newKeys {
            let tried = attempts[task] ?? []
            guard keys.count <= tried.count, Array(tried.prefix(keys.count)) == keys else {
                throw Problem(description: "task \(task): the log holds \(keys) which is not a prefix of the attempts \(tried)")
            }
        }
        for (task, count) in acked {
            let present = newKeys[task]?.count ?? 0
            if present < count {
                figures.lost += count - present
                throw Problem(description: "task \(task): \(count) events acknowledged, \(present) in the log: lost \(count - present)")
            }
            if (attempts[task]?.count ?? 0) > count, present > count { figures.inDoubt += present - count }
        }

        // The model follows the log; the queue must match it exactly.
        for record in newRecords {
            guard let key = Workload.key(of: record.event) else { continue }
            model.keys.append(key)
            switch record.event {
            case .mutationProposed:
                model.proposed.append(key)
                figures.proposals += 1
            case .mutationConfirmed, .mutationRolledBack:
                model.resolved.insert(key)
                figures.resolved += 1
            default: break
            }
        }
        let expected = model.proposed.filter { !model.resolved.contains($0) }
        let queued = try store.pendingMutations().map(\.id.description)
        guard queued == expected else {
            throw Problem(description: "pendingMutations lists \(queued.count) (\(Set(queued).count) distinct), the log says \(expected.count) are pending")
        }
        figures.pendingChecked += queued.count
        // A kill while the store was first created leaves nothing behind once it has opened.
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        guard names == ["data.mdb", "lock.mdb"] else { throw Problem(description: "the store directory holds \(names)") }
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
          lost                       \(figures.lost)
        """
    }
}
