import Foundation
@testable import Freshet
import FreshetCommands
import FreshetHTTP
import FreshetTesting
import Testing

/// Opens a recorded run's store for writing (mutations not sent) with a clock at `offset`
/// seconds after the run started (2026-01-01T00:00:00Z).
func openForCompaction(_ directory: URL, at offset: Int, transport: (any HTTPTransport)? = nil, sends: Bool = false) async throws -> Store {
    let world = MutationWorld()
    await world.clock.advance(by: .seconds(offset))
    var configuration = Configuration.test(freshness: recordedRunPolicy)
    configuration.mapSize = 1 << 26
    configuration.sendsMutations = sends
    var dependencies = world.dependencies
    if let transport { dependencies.transport = transport }
    return try Store(directory: directory, configuration: configuration, dependencies: dependencies)
}

/// The LSNs the log holds, in order.
func logLSNs(_ store: Store) throws -> [UInt64] {
    var lsns: [UInt64] = []
    try store.readLog { entry in
        switch entry {
        case .record(let r): lsns.append(r.lsn.rawValue)
        case .unreadable(let lsn, _): lsns.append(lsn.rawValue)
        }
        return true
    }
    return lsns
}

extension LogToolTests {
    @Suite("Compaction")
    struct CompactionTests {
        @Test("compact keeps the window: verify passes, replay inside it equals what observers saw, LSNs unchanged")
        func compactKeepsWindow() async throws {
            try await withRecordedRun { directory, checkpoints in
                let store = try await openForCompaction(directory, at: 230)
                defer { store.close() }
                // now = +230 s, keep 101 s: the window starts at the first record stamped after
                // +129 s (LSN 8, at +130 s), so the checkpoint holds the state through LSN 7.
                let report = try store.compact(keeping: .seconds(101))
                #expect(report.checkpoint?.lsn == 11)
                #expect(report.checkpoint?.throughLSN == 7)
                #expect(report.removedRecords == 7)
                #expect(report.keptRecords == 0)
                #expect(report.windowStart == 8)
                #expect(store.lastLSN == 11)
                #expect(try logLSNs(store) == [8, 9, 10, 11])
                let verified = try store.verify()
                #expect(verified.problems == [])
                #expect(verified.isOK)
                for checkpoint in checkpoints where checkpoint.lsn >= 7 {
                    let replay = try store.replay(to: .lsn(checkpoint.lsn), policy: recordedRunPolicy)
                    #expect(replay.lsn == checkpoint.lsn, "\(checkpoint.step)")
                    #expect(replay.snapshots == checkpoint.snapshots, "\(checkpoint.step)")
                    #expect(replay.checkpoint?.lsn == 11)
                    #expect(replay.problems == [])
                }
                #expect { try store.replay(to: .lsn(5)) } throws: { ($0 as? ToolError)?.code == .beforeCheckpoint }
                #expect { try store.why("todos", at: .lsn(6)) } throws: { ($0 as? ToolError)?.code == .beforeCheckpoint }
                let why = try store.why("todos", at: .lsn(9), policy: recordedRunPolicy)
                #expect(why.checkpoint?.throughLSN == 7)
                #expect(why.timeline.map(\.lsn) == [8, 9])
                // Nothing older than the window is left: a second compaction does nothing.
                #expect(try store.compact(keeping: .seconds(101)).checkpoint == nil)
            }
        }

        @Test("the proposal of a pending mutation survives compaction and is confirmed afterwards")
        func pendingProposalSurvives() async throws {
            try await withRecordedRun { directory, checkpoints in
                do {
                    let store = try await openForCompaction(directory, at: 230)
                    defer { store.close() }
                    let report = try store.compact(keeping: .zero)
                    #expect(report.checkpoint?.throughLSN == 10)
                    #expect(report.checkpoint?.keptLSNs == [10])
                    #expect(report.removedRecords == 9)
                    #expect(try logLSNs(store) == [10, 11])
                    #expect(try store.verify().problems == [])
                    let replay = try store.replay(policy: recordedRunPolicy)
                    #expect(replay.snapshots.map(\.rows) == checkpoints[7].snapshots.map(\.rows))
                    #expect(replay.pending.map(\.lsn) == [10])
                    #expect(try store.snapshot("todos").pendingMutations.count == 1)
                }
                // Relaunch: the pending edit is sent and confirmed; its confirmation reads the
                // kept proposal back.
                let world = MutationWorld()
                world.transport.on(.patch, "/todos/2", reply: .json(#"{"id":2,"title":"dos"}"#, status: 200))
                var configuration = Configuration.test(freshness: recordedRunPolicy)
                configuration.mapSize = 1 << 26
                let store = try Store(directory: directory, configuration: configuration, dependencies: world.dependencies)
                defer { store.close() }
                for try await snapshot in store.observe("todos") where snapshot.pendingMutations.isEmpty {
                    #expect(snapshot.rows.first { $0.id == "2" }.map { String(decoding: $0.json, as: UTF8.self) } == #"{"id":2,"title":"dos"}"#)
                    break
                }
                #expect(try logLSNs(store) == [10, 11, 12])
                #expect(try store.verify().problems == [])
            }
        }

        @Test("a second compaction covers the first checkpoint; replay and verify start from the latest")
        func compactTwice() async throws {
            try await withRecordedRun { directory, _ in
                let store = try await openForCompaction(directory, at: 230)
                defer { store.close() }
                try store.compact(keeping: .zero)
                try await store.localWrite("favourites", [.upsert(row("2", "two"))])
                let second = try store.compact(keeping: .zero)
                #expect(second.checkpoint?.lsn == 13)
                #expect(second.checkpoint?.throughLSN == 12)
                #expect(second.removedRecords == 2)
                #expect(try logLSNs(store) == [10, 13])
                #expect(try store.verify().problems == [])
                let replay = try store.replay(policy: recordedRunPolicy)
                #expect(replay.lsn == 13)
                #expect(replay.snapshots.first { $0.collection == "favourites" }?.rows.map(\.id) == ["1", "2"])
                #expect(try store.snapshot("favourites").rows.map(\.id) == ["1", "2"])
            }
        }

        @Test("a compaction that another one overtakes while it folds throws locked, not corruptRecord; the store keeps the other's checkpoint and verifies")
        func overtakenCompaction() async throws {
            try await withTemporaryStore { store in
                // More records than one read chunk (4,096): the outer fold reads the second chunk
                // after the inner compaction removed it.
                for i in 0..<5000 { try await store.localWrite("notes", [.upsert(row("n\(i % 50)"))]) }
                var inner: Result<CompactionReport, StoreError>?
                let error = #expect(throws: StoreError.self) {
                    try store.compact(keeping: .zero, progressEvery: 1000) { _ in
                        guard inner == nil else { return }
                        inner = Result { () throws(StoreError) in try store.compact(keeping: .zero) }
                    }
                }
                #expect(error?.code == .locked)
                #expect(error?.message == "another compaction of \(store.directory.path) finished while this one ran (checkpoint at LSN 5001); this one removed nothing")
                let report = try inner?.get()
                #expect(report?.checkpoint?.lsn == 5001)
                #expect(try store.latestCheckpoint()?.lsn == 5001)
                #expect(try store.verify().problems == [])
            }
        }

        @Test("why on a compacted store judges under the policy the checkpoint kept, naming the removed record and the checkpoint")
        func whyAfterCompaction() async throws {
            try await withRecordedRun { directory, _ in
                let store = try await openForCompaction(directory, at: 230)
                let report = try store.compact(keeping: .zero)
                let checkpoint = try #require(report.checkpoint)
                // LSN 2 (the 304) recorded the last policy of todos; favourites was never refreshed.
                let todos = try store.why("todos")
                #expect(todos.policy == recordedRunPolicy)
                #expect(todos.policySource == .checkpoint(lsn: checkpoint.lsn, recordedAt: 2, retry: Configuration.test().retry))
                #expect(todos.checkpoint?.keepsPolicies == true)
                #expect(try store.why("favourites").policySource == .storeDefault)
                store.close()
                let run = runTool(["why", directory.path, "todos"])
                #expect(run.status == 0)
                #expect(run.stdout.dropFirst().first?.contains("under policy maxAge=300 (recorded at LSN 2, kept by the checkpoint at LSN \(checkpoint.lsn); retries: 3 attempts, base delay 1 s, at most 30 s)") == true, "\(run.stdout)")
                let json = runTool(["why", directory.path, "todos", "--json"])
                let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.joined().utf8)) as? [String: Any])
                let source = try #require(object["policySource"] as? [String: Any])
                #expect(source["from"] as? String == "checkpoint")
                #expect(source["lsn"] as? Int == 2)
                #expect(source["checkpointLSN"] as? Int == Int(checkpoint.lsn.rawValue))
                // A second compaction carries the policy over from the first checkpoint.
                let again = try await openForCompaction(directory, at: 400)
                defer { again.close() }
                _ = try await again.localWrite("notes", [.upsert(Row(id: "n", json: Data("{}".utf8)))])
                let second = try #require(try again.compact(keeping: .zero).checkpoint)
                #expect(try again.why("todos").policySource == .checkpoint(lsn: second.lsn, recordedAt: 2, retry: Configuration.test().retry))
            }
        }

        @Test("a checkpoint written before checkpoints kept policies (payload version 1) still reads; why then says the policy was removed")
        func whyAfterVersion1Checkpoint() async throws {
            try await withRecordedRun { directory, _ in
                let store = try await openForCompaction(directory, at: 230)
                let report = try store.compact(keeping: .zero)
                store.close()
                let checkpoint = try #require(report.checkpoint)
                // The export of the compacted store, its checkpoint line without `policies`:
                // what an export of a store compacted by the previous version holds.
                let export = runTool(["export", directory.path])
                #expect(export.status == 0)
                var lines: [String] = []
                for line in export.stdout {
                    var object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                    if object["kind"] as? String == "checkpoint", var event = object["event"] as? [String: Any] {
                        #expect(event["policies"] != nil)
                        event["policies"] = nil
                        object["event"] = event
                    }
                    lines.append(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
                }
                try await withTemporaryDirectory { old in
                    let target = old.appendingPathComponent("store")
                    _ = try Store.importLog(lines: lines, into: target)
                    let imported = try openReadOnly(target)
                    #expect(try imported.verify().problems == [])
                    let diagnosis = try imported.why("todos")
                    imported.close()
                    #expect(diagnosis.policySource == .storeDefault)
                    #expect(diagnosis.checkpoint?.keepsPolicies == false)
                    let run = runTool(["why", target.path, "todos"])
                    #expect(run.stdout.dropFirst().first?.contains("(the store's default: no policy is recorded for this collection after the \(checkpoint); give --policy to judge as the app does)") == true, "\(run.stdout)")
                }
            }
        }

        @Test("compaction refuses a read-only store and a log with a damaged record, removing nothing")
        func refusesBadInput() async throws {
            try await withRecordedRun { directory, _ in
                do {
                    var configuration = Configuration(durability: .relaxed)
                    configuration.sendsMutations = false
                    let readOnly = try Store(directory: directory, configuration: configuration, create: false)
                    defer { readOnly.close() }
                    #expect { try readOnly.compact(keeping: .zero) } throws: { ($0 as? StoreError)?.code == .permissionDenied }
                }
                try withRawEnvironment(directory) { env, dbs in
                    try env.write { txn in
                        var bytes = try #require(try txn.get(dbs["log"]!, key: lsnKey(3)))
                        bytes[40] ^= 0xFF
                        try txn.put(dbs["log"]!, key: lsnKey(3), value: bytes)
                    }
                }
                let store = try await openForCompaction(directory, at: 230)
                defer { store.close() }
                #expect { try store.compact(keeping: .zero) } throws: { error in
                    guard let error = error as? StoreError else { return false }
                    return error.code == .corruptRecord && error.message.contains("LSN 3") && error.message.contains("nothing was removed")
                }
                #expect(try logLSNs(store) == Array(1...10))
            }
        }

        @Test("a checkpoint record round-trips through its bytes, with its policies (version 2) and without (version 1)")
        func checkpointCodec() throws {
            let policy = ReadPolicy(freshness: .maxAge(.seconds(30)), retry: Configuration.RetryPolicy())
            let version1 = Event.Checkpoint(throughLSN: 7, throughTime: Date(timeIntervalSince1970: 1_767_225_630), keptLSNs: [3, 5], removedCount: 5,
                                            entries: [.init(table: .rows, key: [0, 1, 0x61, 0, 0, 0, 0, 0, 0, 0, 0], value: [1, 0x78, 0x7B, 0x7D]),
                                                      .init(table: .marks, key: [0x61], value: [4, 1, 7])])
            var version2 = version1
            version2.policies = [.init(collection: "a", lsn: 6, policy: policy), .init(collection: "b", lsn: 2, policy: ReadPolicy(freshness: .manual, retry: .init()))]
            var none = version1
            none.policies = []
            for checkpoint in [version1, version2, none] {
                let record = LogRecord(lsn: 8, timestamp: Date(timeIntervalSince1970: 1_767_225_700), collection: "", event: .checkpoint(checkpoint))
                let decoded = try LogRecord.decode(record.encoded(), expectedLSN: 8)
                #expect(decoded == record)
                #expect(decoded.kind == .checkpoint)
            }
            // Version 1 bytes are what the previous version wrote: no field 6 or 7.
            let v1Payload = Event.checkpoint(version1).encodedPayload()
            #expect(Array(Event.checkpoint(none).encodedPayload().prefix(v1Payload.count)) == v1Payload)
            #expect(Array(Event.checkpoint(none).encodedPayload().dropFirst(v1Payload.count)) == [0x06, 0x01, 0x02])
            // A payload version this code does not know is refused, not misread.
            var newer = ByteWriter()
            newer.encode(none)
            newer.field(6, uint: 3)
            #expect(throws: (any Error).self) { try Event.decode(kind: .checkpoint, payload: newer.bytes) }
        }
    }
}
