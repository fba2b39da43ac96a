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
}
