import Foundation
import Synchronization
import Testing
@testable import Freshet

/// At `Durability.none` an append that finds the writer idle commits on the calling thread
/// (`LogWriter.commitIfIdle`, docs/performance.md round 10); appends that arrive meanwhile
/// join its group or queue for the writer's thread.
@Suite("Commits on the calling thread")
struct CallerCommitTests {
    static func write(_ id: String) -> Event {
        .localWrite(Event.RowChanges([.upsert(row(id))]))
    }

    @Test("an append to an idle writer at Durability.none commits on the thread that appends, one commit each")
    func idleAppendCommitsOnTheCallingThread() async throws {
        try await withTemporaryStore { store in
            for i in 1...5 {
                let caller = pthread_self()
                let committedOn = Mutex<pthread_t?>(nil)
                let lsn = try await store.append([("x", Self.write("r\(i)"))], onCommitted: { committedOn.withLock { $0 = pthread_self() } })
                #expect(lsn == LSN(UInt64(i)))
                let thread = try #require(committedOn.withLock { $0 })
                #expect(pthread_equal(thread, caller) != 0)
            }
            #expect(store.groupCommitSizes == [1: 5])
            #expect(try store.snapshot("x").rows.map(\.id) == ["r1", "r2", "r3", "r4", "r5"])
        }
    }

    @Test("concurrent appends at Durability.none each commit once, in each task's order, with the LSNs 1 … n")
    func concurrentAppends() async throws {
        try await withTemporaryStore { store in
            let tasks = 16, writes = 25
            let lsns = try await withThrowingTaskGroup(of: [LSN].self) { group in
                for t in 0..<tasks {
                    group.addTask {
                        var mine: [LSN] = []
                        for w in 0..<writes { mine.append(try await store.append(Self.write("t\(t)-\(w)"), to: "c\(t % 4)")) }
                        return mine
                    }
                }
                var all: [[LSN]] = []
                for try await mine in group { all.append(mine) }
                return all
            }
            let total = tasks * writes
            for mine in lsns { #expect(mine == mine.sorted() && Set(mine).count == writes) }
            #expect(lsns.flatMap { $0 }.sorted() == (1...total).map { LSN(UInt64($0)) })
            #expect(store.groupCommitSizes.reduce(0) { $0 + $1.key * $1.value } == total)
            #expect(try store.allRecords().map(\.lsn) == (1...total).map { LSN(UInt64($0)) })
            for c in 0..<4 {
                let ids = try store.snapshot("c\(c)").rows.map(\.id)
                #expect(Set(ids) == Set((0..<tasks).filter { $0 % 4 == c }.flatMap { t in (0..<writes).map { "t\(t)-\($0)" } }))
            }
        }
    }

    @Test("appends racing close either commit, and are in the log after reopening, or throw closed")
    func appendsRacingClose() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            let outcomes = await withTaskGroup(of: [Result<LSN, StoreError>].self) { group in
                for t in 0..<8 {
                    group.addTask {
                        var mine: [Result<LSN, StoreError>] = []
                        for w in 0..<20 {
                            do throws(StoreError) {
                                mine.append(.success(try await store.append(Self.write("t\(t)-\(w)"), to: "c")))
                            } catch {
                                mine.append(.failure(error))
                            }
                        }
                        return mine
                    }
                }
                group.addTask {
                    for _ in 0..<20 { await Task.yield() }
                    store.close()
                    return []
                }
                var all: [Result<LSN, StoreError>] = []
                for await mine in group { all += mine }
                return all
            }
            #expect(outcomes.count == 160)
            let committed = outcomes.compactMap { outcome -> LSN? in if case .success(let lsn) = outcome { lsn } else { nil } }
            for case .failure(let error) in outcomes { #expect(error.code == .closed) }
            let reopened = try Store(directory: directory, configuration: .test(), dependencies: .test())
            defer { reopened.close() }
            #expect(try reopened.allRecords().map(\.lsn) == committed.sorted())
            #expect(try reopened.snapshot("c").rows.count == committed.count)
        }
    }
}
