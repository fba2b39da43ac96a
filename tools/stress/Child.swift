import Foundation
import Freshet

/// The process the parent kills: `freshet-stress child DIR DURABILITY SEED ITERATION TASKS`.
///
/// Opens the store in DIR with the durability given (`full`, `relaxed`, `none`; mutations are
/// never sent: no network), prints `ready`, then runs TASKS writer tasks that each append one
/// event at a time, forever, until SIGKILL. Before each append a task prints
/// `attempt TASK N KIND KEY` (a `localWrite` adds the row ID it deletes, or `-`), after it is
/// acknowledged (the append returned: committed, durable per the mode) `ack TASK N KIND KEY LSN`.
/// About one step in fifty compacts the log instead (``Workload/compact(_:draw:)``):
/// `attempt TASK N compact -`, then `ack TASK N compact - CHECKPOINT_LSN THROUGH_LSN` (or
/// `none` / `locked`). Each line is one write(2) of less than PIPE_BUF
/// bytes, so lines from different tasks never interleave and a line written before the kill
/// reaches the parent. Exit status 2: bad arguments or a failed append (printed as `error …`).
enum Child {
    static func run(_ arguments: [String]) async -> Never {
        guard arguments.count == 5, let durability = Parent.durability(arguments[1]), let seed = UInt64(arguments[2]),
              let iteration = Int(arguments[3]), let tasks = Int(arguments[4]), tasks >= 1 else {
            fail("usage: freshet-stress child DIR full|relaxed|none SEED ITERATION TASKS")
        }
        var configuration = Configuration(durability: durability)
        configuration.sendsMutations = false
        let store: Store
        do {
            store = try Store(directory: URL(fileURLWithPath: arguments[0]), configuration: configuration)
        } catch {
            fail("cannot open \(arguments[0]): \(error)")
        }
        // Mutations this run may confirm or roll back: those still pending from earlier runs.
        let pending: [QueuedMutation]
        do {
            pending = try store.pendingMutations()
        } catch {
            fail("cannot list pending mutations: \(error)")
        }
        say("ready")
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                let mine = pending.filter { $0.name == Workload.mutationName(task) }.map(\.id)
                let random = RandomSource.seeded(seed &+ UInt64(task) &* 0x1000_0000_0000_0001)
                group.addTask {
                    await writer(task: task, iteration: iteration, store: store, random: random, pending: mine)
                }
            }
        }
        fail("writer tasks ended")
    }

    /// One writer task: appends one event at a time, printing attempt and ack lines.
    static func writer(task: Int, iteration: Int, store: Store, random: RandomSource, pending: [MutationID]) async {
        var pending = pending
        let local = Workload.localCollection(task)
        let remote = Workload.remoteCollection(task)
        var n = 0
        while true {
            // The first step of each run writes the local collection, so proposals name a known one.
            var step = n == 0 ? Workload.Step.localWrite : Workload.Step.pick(random)
            if (step == .confirm || step == .rollBack), pending.isEmpty { step = .propose }
            let tag = "i\(iteration)-t\(task)-n\(n)"
            do {
                switch step {
                case .localWrite:
                    let body = Data("{\"tag\":\"\(tag)\",\"n\":\(n)}".utf8)
                    var ops: [Event.RowChanges.Op] = [.upsert(Row(id: tag, json: body))]
                    var deleted = "-"
                    if n > 4, random.next() % 2 == 0 {
                        deleted = "i\(iteration)-t\(task)-n\(n - 4)"
                        ops.append(.delete(id: deleted))
                    }
                    say("attempt \(task) \(n) localWrite \(tag) \(deleted)")
                    let lsn = try await store.localWrite(local, ops)
                    say("ack \(task) \(n) localWrite \(tag) \(lsn)")
                case .fetch:
                    say("attempt \(task) \(n) fetch \(tag)")
                    let rows = [Row(id: tag, json: Data("{\"page\":\(n)}".utf8))] + (0..<Int(random.next() % 20)).map { i in
                        Row(id: "row-\(i)", json: Data("{\"i\":\(i),\"seen\":\(n)}".utf8))
                    }
                    let response = ResponseInfo(url: "http://stress.invalid/\(remote)", status: 200, etag: "\"\(tag)\"", cacheControl: "max-age=60",
                                                durationMicros: 1000, responseBytes: 100 * rows.count)
                    let lsn = try await store.append(.fetched(Event.Fetched(placement: .replace, rows: rows, response: response)), to: remote)
                    say("ack \(task) \(n) fetch \(tag) \(lsn)")
                case .propose:
                    let id = Workload.mutationID(random)
                    say("attempt \(task) \(n) propose \(id)")
                    let row = Row(id: "draft-\(tag)", json: Data("{\"draft\":\"\(tag)\"}".utf8))
                    let mutation = Mutation(name: Workload.mutationName(task), ops: [.upsert(row, in: local)], request: .init(method: .post, path: "/items"))
                    let proposed = try await store.propose(mutation, id: id)
                    pending.append(id)
                    say("ack \(task) \(n) propose \(id) \(proposed.lsn)")
                case .confirm:
                    let id = pending.removeFirst()
                    say("attempt \(task) \(n) confirm \(id)")
                    let row = Row(id: "srv-\(tag)", json: Data("{\"server\":\"\(tag)\"}".utf8))
                    let confirmed = Event.MutationConfirmed(id: id, status: 201, rows: [(local, row)], affected: [local])
                    let lsn = try await store.append(.mutationConfirmed(confirmed), to: local)
                    say("ack \(task) \(n) confirm \(id) \(lsn)")
                case .rollBack:
                    let id = pending.removeFirst()
                    say("attempt \(task) \(n) rollBack \(id)")
                    let rolledBack = Event.MutationRolledBack(id: id, status: 422, reason: "stress", affected: [local])
                    let lsn = try await store.append(.mutationRolledBack(rolledBack), to: local)
                    say("ack \(task) \(n) rollBack \(id) \(lsn)")
                case .compact:
                    let draw = random.next()
                    say("attempt \(task) \(n) compact -")
                    let outcome = try Workload.compact(store, draw: draw)
                    say("ack \(task) \(n) compact - \(outcome)")
                }
            } catch {
                say("error \(task) \(n) \(step.rawValue) \(error)")
                fail("task \(task) step \(n) (\(step.rawValue)) failed: \(error)")
            }
            n += 1
        }
    }

    /// Prints one line with one write(2), so a reader of the pipe sees it at once.
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("freshet-stress child: \(message)\n".utf8))
        exit(2)
    }
}
