import Foundation
import Testing
@testable import Freshet

/// Group commit with SyncMarks cached for the length of a commit: a batch that fails in the
/// fold is undone alone — rows, log records and cached SyncMarks — and the other batches of
/// its group commit.
@Suite("Group commit")
struct GroupCommitTests {
    /// A confirmation of a mutation that was never proposed: valid to append, refused by the fold.
    static let badConfirmation = Event.mutationConfirmed(Event.MutationConfirmed(id: MutationID(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xAA))), status: 200))

    static func write(_ rows: Row...) -> Event {
        .localWrite(Event.RowChanges(rows.map { .upsert($0) }))
    }

    @Test("a batch that fails in the fold leaves no SyncMark, row or record behind, and the rest of its group commits")
    func failedBatchInGroup() async throws {
        try await withTemporaryDirectory { directory in
            do {
                let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
                defer { store.close() }
                let group = store.writer.commitGroup([
                    [LogWriter.Entry(collection: "x", event: Self.write(row("a")))],
                    // Changes x's (cached) SyncMark and a row, then fails.
                    [LogWriter.Entry(collection: "x", event: Self.write(row("b"))), LogWriter.Entry(collection: "x", event: Self.badConfirmation)],
                    [LogWriter.Entry(collection: "y", event: Self.write(row("c")))],
                ])
                #expect(try group.results[0].get() == LSN(1))
                let failure = #expect(throws: StoreError.self) { try group.results[1].get() }
                #expect(failure?.code == .invalidEvent)
                #expect(try group.results[2].get() == LSN(2))
                #expect(group.last == LSN(2))
                #expect(group.touched == ["x", "y"])
                #expect(store.lastLSN == LSN(2))
                let x = try store.snapshot("x")
                #expect(x.rows.map(\.id) == ["a"])
                #expect(x.syncMark?.lastLSN == LSN(1))
                #expect(x.syncMark?.rowsLSN == LSN(1))
                #expect(try store.snapshot("y").syncMark?.lastLSN == LSN(2))
                #expect(try store.allRecords().map(\.collection) == ["x", "y"])
            }
            // Reopened: the marks were written, once, with the commit.
            let reopened = try Store(directory: directory, configuration: .test(), dependencies: .test())
            defer { reopened.close() }
            #expect(try reopened.snapshot("x").syncMark?.lastLSN == LSN(1))
            #expect(try reopened.snapshot("y").syncMark?.lastLSN == LSN(2))
            #expect(try await reopened.append(Self.write(row("d")), to: "x") == LSN(3))
        }
    }

    @Test("a batch alone in its group that fails in the fold changes nothing, and the next append gets the next LSN")
    func failedBatchAlone() async throws {
        try await withTemporaryStore { store in
            try await store.append(Self.write(row("a")), to: "x")
            let failure = await #expect(throws: StoreError.self) {
                try await store.append([("x", Self.write(row("b"))), ("x", Self.badConfirmation)])
            }
            #expect(failure?.code == .invalidEvent)
            let x = try store.snapshot("x")
            #expect(x.rows.map(\.id) == ["a"])
            #expect(x.syncMark?.lastLSN == LSN(1))
            #expect(store.lastLSN == LSN(1))
            #expect(try await store.append(Self.write(row("c")), to: "x") == LSN(2))
            #expect(try store.snapshot("x").syncMark?.lastLSN == LSN(2))
        }
    }

    @Test("several batches to one collection in one group leave the SyncMark of the last one")
    func oneMarkPerCommit() async throws {
        try await withTemporaryStore { store in
            let group = store.writer.commitGroup([
                [LogWriter.Entry(collection: "x", event: Self.write(row("a")))],
                [LogWriter.Entry(collection: "x", event: .invalidated(Event.Invalidated(reason: "test")))],
                [LogWriter.Entry(collection: "x", event: Self.write(row("b")))],
            ])
            #expect(try group.results.map { try $0.get() } == [LSN(1), LSN(2), LSN(3)])
            let x = try store.snapshot("x")
            #expect(x.rows.map(\.id) == ["a", "b"])
            #expect(x.syncMark?.lastLSN == LSN(3))
            #expect(x.syncMark?.rowsLSN == LSN(3))
            #expect(x.syncMark?.invalidatedLSN == LSN(2))
        }
    }

    /// A `join` for ``LogWriter/commitGroup(_:join:)`` that hands over `answers` one per call,
    /// then nothing, and counts its calls.
    final class ScriptedJoin: @unchecked Sendable {
        // @unchecked: called on the test's thread only, inside commitGroup.
        private var answers: [[[LogWriter.Entry]]]
        private(set) var calls = 0

        init(_ answers: [[[LogWriter.Entry]]]) { self.answers = answers }

        func next() -> [[LogWriter.Entry]] {
            calls += 1
            return answers.isEmpty ? [] : answers.removeFirst()
        }
    }

    static func entry(_ collection: String, _ id: String) -> LogWriter.Entry {
        LogWriter.Entry(collection: collection, event: write(row(id)))
    }

    @Test("appends that join a group while it folds commit with it: one commit, one result per batch in order")
    func joinedBatchesShareTheCommit() async throws {
        try await withTemporaryStore { store in
            let join = ScriptedJoin([[[Self.entry("x", "b")], [Self.entry("y", "c"), Self.entry("y", "d")]], [[Self.entry("x", "e")]]])
            let group = store.writer.commitGroup([[Self.entry("x", "a")]], join: join.next)
            let lsns = try group.results.map { try $0.get() }
            #expect(lsns == [LSN(1), LSN(2), LSN(4), LSN(5)])
            #expect(join.calls == 3)
            #expect(group.last == LSN(5))
            #expect(group.touched == ["x", "y"])
            #expect(store.groupCommitSizes == [4: 1])
            #expect(try store.snapshot("x").rows.map(\.id) == ["a", "b", "e"])
            #expect(try store.snapshot("x").syncMark?.lastLSN == LSN(5))
            #expect(try store.snapshot("y").rows.map(\.id) == ["c", "d"])
            #expect(try store.allRecords().map(\.collection) == ["x", "x", "y", "y", "x"])
        }
    }

    @Test("a joined batch that fails in the fold is undone alone; the batches before and after it commit")
    func failedJoinedBatch() async throws {
        try await withTemporaryStore { store in
            let join = ScriptedJoin([[[Self.entry("x", "b"), LogWriter.Entry(collection: "x", event: Self.badConfirmation)]], [[Self.entry("y", "c")]]])
            let group = store.writer.commitGroup([[Self.entry("x", "a")]], join: join.next)
            #expect(group.results.count == 3)
            let first = try group.results[0].get()
            #expect(first == LSN(1))
            let failure = #expect(throws: StoreError.self) { try group.results[1].get() }
            #expect(failure?.code == .invalidEvent)
            #expect(try group.results[2].get() == LSN(2))
            // Once while the group first ran (it threw at the joined bad batch); twice when it
            // ran again with each batch isolated: y's batch, then nothing.
            #expect(join.calls == 3)
            #expect(store.groupCommitSizes == [3: 1])
            #expect(try store.snapshot("x").rows.map(\.id) == ["a"])
            #expect(try store.snapshot("x").syncMark?.lastLSN == LSN(1))
            #expect(try store.snapshot("y").rows.map(\.id) == ["c"])
            #expect(store.lastLSN == LSN(2))
        }
    }

    @Test("joining stops once the group holds joinLimit events, and the group commits")
    func joinLimit() async throws {
        try await withTemporaryStore { store in
            let join = ScriptedJoin((0..<(LogWriter.joinLimit + 10)).map { [[Self.entry("x", "r\($0)")]] })
            let group = store.writer.commitGroup([[Self.entry("x", "first")]], join: join.next)
            #expect(group.results.count == LogWriter.joinLimit)
            #expect(group.last == LSN(UInt64(LogWriter.joinLimit)))
            #expect(join.calls == LogWriter.joinLimit - 1)
            #expect(store.groupCommitSizes == [LogWriter.joinLimit: 1])
            let x = try store.snapshot("x")
            #expect(x.rows.count == LogWriter.joinLimit)
        }
    }

    @Test("a group that finds the map full grows it and folds every batch it took, joined ones included, once")
    func joinedBatchesAfterMapGrowth() async throws {
        try await withTemporaryStore(configuration: MapGrowthTests.growing) { store in
            let big = MapGrowthTests.bigRows
            let join = ScriptedJoin([[big[100..<200].map { LogWriter.Entry(collection: "big", event: Self.write($0)) }]])
            let group = store.writer.commitGroup([big[0..<100].map { LogWriter.Entry(collection: "big", event: Self.write($0)) }], join: join.next)
            let lsns = try group.results.map { try $0.get() }
            #expect(lsns == [LSN(100), LSN(200)])
            #expect(store.groupCommitSizes == [2: 1])
            #expect(try store.snapshot("big").rows.map(\.id) == big.map(\.id))
            #expect(try store.allRecords().count == 200)
            #expect(try store.verify().problems == [])
        }
    }
}
