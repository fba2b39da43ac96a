import Foundation
import Freshet
import FreshetTesting
import Testing

extension LogToolTests {
    @Suite("freshet replay against an observer")
    struct ReplayObserverTests {
        @Test("replay at the LSN of each snapshot an observer was shown equals that snapshot")
        func replayEqualsObserved() async throws {
            try await withTemporaryDirectory { directory in
                var configuration = Configuration.test()
                configuration.sendsMutations = false
                let store = try Store(directory: directory, configuration: configuration, dependencies: .test())
                var observed: [Snapshot] = []
                var iterator = store.observe("favourites").makeAsyncIterator()
                _ = try await iterator.next() // the snapshot before any write
                let steps: [[Event.RowChanges.Op]] = [
                    [.upsert(row("1", "one")), .upsert(row("2", "two"))],
                    [.upsert(row("3", "three"))],
                    [.delete(id: "1"), .upsert(row("2", "zwei"))],
                    [.upsert(row("4", "four")), .delete(id: "3")],
                ]
                for (i, ops) in steps.enumerated() {
                    try await store.append(.localWrite(Event.RowChanges(ops)), to: "favourites")
                    try await store.append(replace(rows("\(i)")), to: "other") // an LSN the observer does not see
                    while let snapshot = try await iterator.next() {
                        if snapshot.rows.count > 0, snapshot.lsn.rawValue == UInt64(2 * i + 1) {
                            observed.append(snapshot)
                            break
                        }
                    }
                }
                store.close()
                #expect(observed.map(\.lsn) == [1, 3, 5, 7])
                var readOnly = Configuration(durability: .relaxed)
                readOnly.sendsMutations = false
                let reopened = try Store(directory: directory, configuration: readOnly, create: false)
                defer { reopened.close() }
                for snapshot in observed {
                    let replay = try reopened.replay(to: .lsn(snapshot.lsn), collections: .name("favourites"))
                    #expect(replay.snapshots.map(\.rows) == [snapshot.rows], "LSN \(snapshot.lsn)")
                    #expect(replay.snapshots.map(\.syncMark) == [snapshot.syncMark], "LSN \(snapshot.lsn)")
                    #expect(replay.snapshots.map(\.status) == [snapshot.status], "LSN \(snapshot.lsn)")
                }
            }
        }
    }
}
