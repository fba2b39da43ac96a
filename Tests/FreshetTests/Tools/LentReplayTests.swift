import Foundation
@testable import FreshetCommands
@testable import Freshet
import Synchronization
import Testing

extension LogToolTests {
    /// `replay` prints rows straight from the replayed tables (``LentReplay``, issue 8's speed
    /// round 7): the same collections, marks, statuses, pending mutations and row bytes as the
    /// ``Replay`` of `Store.replay`, which makes a `Row` of each.
    @Suite("replay with rows lent from the replayed tables")
    struct LentReplayTests {
        /// What a lent replay shows, in the form of a ``Replay``'s fields.
        struct Shown: Equatable {
            var lsn: LSN
            var time: Date?
            var collections: [String]
            var marks: [SyncMark?]
            var statuses: [Snapshot.Status]
            var lsns: [LSN]
            var pendingMutations: [[MutationID]]
            var rows: [[Row]]
            var pending: [PendingMutationInfo]
            var problems: [StoreProblem]
            var recordCount: Int
            var checkpoint: CheckpointInfo?

            init(_ r: Replay) {
                self.init(lsn: r.lsn, time: r.time, snapshots: r.snapshots, rows: r.snapshots.map(\.rows),
                          pending: r.pending, problems: r.problems, recordCount: r.recordCount, checkpoint: r.checkpoint)
            }

            init(_ r: LentReplay) throws {
                let rows = try r.snapshots.map { s in
                    var lent: [Row] = []
                    try r.forEachRow(of: s) { id, json in
                        lent.append(Row(id: String(decoding: id, as: UTF8.self), json: Data(json)))
                    }
                    #expect(lent.count == s.rowCount, "\(s.collection)")
                    return lent
                }
                self.init(lsn: r.lsn, time: r.time, snapshots: r.snapshots, rows: rows,
                          pending: r.pending, problems: r.problems, recordCount: r.recordCount, checkpoint: r.checkpoint)
            }

            /// The fields both kinds of replay share, with the rows made by the caller.
            private init(lsn: LSN, time: Date?, snapshots: [some ShownSnapshot], rows: [[Row]], pending: [PendingMutationInfo],
                         problems: [StoreProblem], recordCount: Int, checkpoint: CheckpointInfo?) {
                self.lsn = lsn
                self.time = time
                collections = snapshots.map(\.collection)
                marks = snapshots.map(\.syncMark)
                statuses = snapshots.map(\.status)
                lsns = snapshots.map(\.lsn)
                pendingMutations = snapshots.map(\.pendingMutations)
                self.rows = rows
                self.pending = pending
                self.problems = problems
                self.recordCount = recordCount
                self.checkpoint = checkpoint
            }
        }

        static func readOnly(_ directory: URL) throws -> Store {
            var configuration = Configuration(durability: .relaxed)
            configuration.sendsMutations = false
            return try Store(directory: directory, configuration: configuration, create: false)
        }

        @Test("at every step of the recorded run (a pending edit, a rollback, an invalidation, a failed fetch), for every filter, the lent replay is the replay")
        func recordedRun() async throws {
            try await withRecordedRun { directory, checkpoints in
                let store = try Self.readOnly(directory)
                defer { store.close() }
                let points: [ReplayPoint] = checkpoints.map { .lsn($0.lsn) } + [.end]
                let filters: [CollectionFilter] = [.all, .name("todos"), .prefix("fav"), .name("none")]
                var withPending = 0
                for point in points {
                    for filter in filters {
                        for policy in [nil, recordedRunPolicy] {
                            let made = try store.replay(to: point, collections: filter, policy: policy)
                            let lent = try store.withLentReplay(to: point, collections: filter, policy: policy) { r throws(ToolError) in
                                do { return try Shown(r) } catch { throw ToolError.wrapping(error, doing: "test") }
                            }
                            #expect(lent == Shown(made), "\(point) \(filter)")
                            withPending += made.snapshots.filter { !$0.pendingMutations.isEmpty }.count
                        }
                    }
                }
                // The overlay's path (rows made, pending ops applied) was taken too.
                #expect(withPending > 0)
            }
        }

        @Test("a no-store collection lends no rows, though a later local write put one in the table")
        func noStore() async throws {
            try await withTemporaryStore { store in
                try await store.append(.fetched(.init(placement: .replace, rows: rows("1", "2"), response: ResponseInfo(url: "http://h/items", status: 200))), to: "items")
                try await store.append(.fetched(.init(placement: .replace, rows: [], response: ResponseInfo(url: "http://h/items", status: 200, cacheControl: "no-store"),
                                                      rowsWithheld: true)), to: "items")
                try await store.localWrite("items", [.upsert(row("9"))])
                try await store.localWrite("other", [.upsert(row("7")), .upsert(row("8"))])
                let made = try store.replay()
                #expect(made.snapshots.map(\.rows.count) == [0, 2])
                let lent = try store.withLentReplay { r throws(ToolError) in
                    #expect(r.snapshots.map(\.rowCount) == [0, 2])
                    do { return try Shown(r) } catch { throw ToolError.wrapping(error, doing: "test") }
                }
                #expect(lent == Shown(made))
            }
        }

        @Test("only keys of the collection's prefix and 8 bytes are rows: a longer or shorter key under the prefix is skipped, the next collection ends the walk")
        func rowKeysOnly() async throws {
            try await withTemporaryStore { store in
                let dbs = store.state.dbs
                let scratch = ScratchState(dbs: dbs)
                let a = Keys.collection("a")
                let put = { (key: [UInt8], row: Row) in try scratch.tables.put(dbs.rows, key: key, value: MaterializedState.encodeRow(row)) }
                try put(Keys.row(a, position: 1), row("1"))
                try put(Keys.row(a, position: 2), row("2", "two"))
                // A per-collection entry after the rows (collection key ‖ nine 0xFF bytes).
                try put(a + [UInt8](repeating: 0xFF, count: 9), row("stamp"))
                try put(a + [UInt8](repeating: 0x00, count: 7), row("short"))
                try put(Keys.row(a, position: 3), row("3"))
                try put(Keys.row(Keys.collection("ab"), position: 1), row("other"))
                try put(Keys.row(Keys.collection("b"), position: 0), row("b0"))
                var seen: [Row] = []
                try LentReplay.forEachStoredRow(in: scratch, prefix: a) { value, id in
                    seen.append(Row(id: String(decoding: UnsafeRawBufferPointer(rebasing: value[id]), as: UTF8.self),
                                    json: Data(UnsafeRawBufferPointer(rebasing: value[id.upperBound...]))))
                }
                #expect(seen == [row("1"), row("2", "two"), row("3")])
            }
        }

        @Test("a stored row's ID is found and checked as decodeRow checks it, with its messages",
              arguments: [
                ([UInt8](), "materialized row: truncated row ID length"),
                ([0x80], "materialized row: truncated row ID length"),
                ([0x05, 0x61, 0x62], "materialized row: row ID is truncated"),
                ([0x02, 0xC3, 0x28, 0x7B, 0x7D], "materialized row: row ID is not UTF-8"),
                ([0x09] + Array("abcdefgh".utf8) + [0xFF], "materialized row: row ID is not UTF-8"),
              ])
        func rowIDErrors(value: [UInt8], message: String) {
            func failure(_ body: () throws -> Void) -> String? {
                do { try body() } catch { return (error as? StoreError)?.message }
                return nil
            }
            let lent = failure { _ = try value.withUnsafeBytes { try MaterializedState.rowIDRange($0) } }
            let made = failure { _ = try value.withUnsafeBytes { try MaterializedState.decodeRow($0) } }
            #expect(lent == message)
            #expect(made == message)
        }

        @Test("a stored row's ID range: ASCII of 0, 8 and 9 bytes, UTF-8, a padded varint")
        func rowIDRanges() throws {
            let cases: [([UInt8], Range<Int>)] = [
                ([0x00] + Array("{}".utf8), 1..<1),
                ([0x08] + Array("abcdefgh{}".utf8), 1..<9),
                ([0x09] + Array("abcdefghi".utf8), 1..<10),
                ([0x02, 0xC3, 0xA9] + Array("{\"n\":1}".utf8), 1..<3),
                ([0x81, 0x00, 0x61], 2..<3),
              ]
            for (value, range) in cases {
                #expect(try value.withUnsafeBytes { try MaterializedState.rowIDRange($0) } == range)
                let row = try value.withUnsafeBytes { try MaterializedState.decodeRow($0) }
                #expect(Array(row.id.utf8) == Array(value[range]))
                #expect(Array(row.json) == Array(value[range.upperBound...]))
            }
        }

        @Test("replay's text and --json lines through the Tool are the ones the made rows give, with and without byte lines")
        func toolOutput() async throws {
            try await withRecordedRun { directory, checkpoints in
                let store = try Self.readOnly(directory)
                let expected = try checkpoints.map { try store.replay(to: .lsn($0.lsn)) }
                store.close()
                for (checkpoint, made) in zip(checkpoints, expected) {
                    let text = Self.run(["replay", directory.path, "--to", "\(checkpoint.lsn)"], bytes: false)
                    let bytes = Self.run(["replay", directory.path, "--to", "\(checkpoint.lsn)"], bytes: true)
                    #expect(text.status == 0)
                    #expect(bytes.lines == text.lines)
                    // Every row's line, in order after its collection's header.
                    let rowLines = made.snapshots.flatMap { $0.rows.map(Tool.rowLine) }
                    #expect(text.lines.filter { $0.hasPrefix("  ") && !$0.hasPrefix("  SyncMark") && !$0.hasPrefix("  pending") && !$0.hasPrefix("  LSN") } == rowLines)
                    let json = Self.run(["replay", directory.path, "--to", "\(checkpoint.lsn)", "--json"], bytes: true)
                    #expect(json.status == 0)
                    let collectionLines = json.lines.filter { $0.hasPrefix(#"{"type":"collection""#) }
                    #expect(collectionLines.count == made.snapshots.count)
                    for (line, snapshot) in zip(collectionLines, made.snapshots) {
                        var w = JSONWriter()
                        w.array { a in
                            for row in snapshot.rows {
                                a.element { $0.object { r in r.field("id", string: row.id); r.field("value") { $0.rowValue(row.json) } } }
                            }
                        }
                        #expect(line.hasSuffix(#","rows":"# + w.string + "}"), "\(snapshot.collection)")
                    }
                }
            }
        }

        static func run(_ arguments: [String], bytes: Bool) -> (status: Int32, lines: [String]) {
            let out = Mutex<[String]>([])
            let tool = Tool(standardOutput: { line in out.withLock { $0.append(line) } }, standardError: { _ in },
                            standardOutputBytes: bytes ? { line in out.withLock { $0.append(String(decoding: line, as: UTF8.self)) } } : nil)
            let status = tool.run(arguments)
            return (status, out.withLock { $0 })
        }

        @Test("a stored row's JSON lent as bytes is written as the Data form writes it")
        func rowValueBytes() {
            for json in ["", "{}", "{\"a\":\n1,\r\n\"b\":2}", "[1,2]\n"] {
                var fromData = JSONWriter()
                fromData.rowValue(Data(json.utf8))
                var fromBytes = JSONWriter()
                Array(json.utf8).withUnsafeBytes { fromBytes.rowValue($0) }
                #expect(fromBytes.bytes == fromData.bytes, "\(json.debugDescription)")
            }
        }

        @Test("a collection's status is derived from whether it has rows, as from the rows")
        func statusFromRowCount() {
            let now = Date(timeIntervalSince1970: 1_000_000)
            var fetched = SyncMark()
            fetched.validatedAt = now.addingTimeInterval(-60)
            fetched.fetchedAt = fetched.validatedAt
            var invalidated = fetched
            invalidated.invalidatedAt = now
            var local = SyncMark()
            local.lastLSN = 3
            for mark in [nil, fetched, invalidated, local] {
                for policy in [FreshnessPolicy.maxAge(.seconds(30)), .maxAge(.seconds(300)), .always, .manual] {
                    for rows in [[], [row("1")]] {
                        let made = QueryState.derive(rows: rows, mark: mark, policy: policy, now: now, isFetching: false)
                        #expect(QueryState.derive(hasRows: !rows.isEmpty, mark: mark, policy: policy, now: now, isFetching: false) == made)
                    }
                }
            }
        }
    }
}

/// What ``Snapshot`` and ``LentSnapshot`` both show, besides their rows.
protocol ShownSnapshot {
    var collection: String { get }
    var syncMark: SyncMark? { get }
    var status: Snapshot.Status { get }
    var lsn: LSN { get }
    var pendingMutations: [MutationID] { get }
}

extension Snapshot: ShownSnapshot {}
extension LentSnapshot: ShownSnapshot {}
