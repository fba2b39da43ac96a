import Foundation
import Freshet
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Issue 8: a writer process killed while LMDB's `mdb_txn_commit` writes its pages and meta
/// page. `freshet-store-helper commits` appends large transactions (8 rows of 32 KiB, about
/// 0.5 MiB written per commit with two flushes, durability `full`) until a timer in the
/// helper SIGKILLs it (0–40 ms after the first acknowledged commit); most of its time is spent inside the commit, so most kills land there.
/// After each kill the store must verify (the log folds to the materialized databases byte
/// for byte) and hold every write the helper acknowledged.
///
/// The kill moments come from a fixed seed (the same on every run). `FRESHET_COMMIT_KILLS=N`
/// runs N kills instead of 30 (the campaign in docs/reliability.md).
@Suite("A writer killed inside LMDB's commit")
struct CommitKillTests {
    struct Big: Decodable {
        var i: Int
    }

    @Test("a writer SIGKILLed at random moments of large commits leaves a store that verifies and keeps every acknowledged write")
    func killInsideCommit() async throws {
        try await offPool {
            let rounds = ProcessInfo.processInfo.environment["FRESHET_COMMIT_KILLS"].flatMap { Int($0) } ?? 30
            var generator = DamagedFileTests.SplitMix(state: 0x0008_2026_1201)
            var directory = FileManager.default.temporaryDirectory.appendingPathComponent("freshet-commit-kill-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            var killedAfterAck = 0
            var acknowledged = 0
            for round in 0..<rounds {
                if round % 50 == 0 {
                    // A new store every 50 kills, so a long campaign's log stays small.
                    try? FileManager.default.removeItem(at: directory)
                    directory = FileManager.default.temporaryDirectory.appendingPathComponent("freshet-commit-kill-\(UUID().uuidString)")
                }
                let before: LSN = try FileManager.default.fileExists(atPath: directory.appendingPathComponent("data.mdb").path)
                    ? { let s = try openReadOnly(directory); defer { s.close() }; return s.lastLSN }() : .zero
                let delay = UInt32.random(in: 0...40_000, using: &generator)
                let helper = try await StoreHelper(["commits", directory.path, String(delay)])
                #expect(try await helper.nextLine() == "ready", "round \(round)")
                var lastAck: (lsn: UInt64, i: Int)?
                while let line = try? await helper.nextLine() {
                    let parts = line.split(separator: " ")
                    guard parts.count == 3, parts[0] == "acked", let lsn = UInt64(parts[1]), let i = Int(parts[2]) else {
                        Issue.record("round \(round): unexpected line \(line.debugDescription)")
                        break
                    }
                    lastAck = (lsn, i)
                }
                let status = await helper.waitForExit()
                #expect(status == SIGKILL, "round \(round): the helper ended with \(status), not SIGKILL")
                _ = await helper.kill()

                let store = try openReadOnly(directory)
                defer { store.close() }
                let report = try store.verify()
                #expect(report.problems == [], "round \(round) (kill after \(delay) µs): \(report.problems)")
                // The helper's timer starts after its first acknowledged commit.
                let last = try #require(lastAck, "round \(round): the helper printed no acknowledged commit")
                #expect(store.lastLSN >= before, "round \(round)")
                killedAfterAck += 1
                acknowledged += last.i + 1
                // The acknowledged write is in the log, and its rows (or later ones) are stored.
                #expect(store.lastLSN.rawValue >= last.lsn, "round \(round): acknowledged LSN \(last.lsn) lost, log ends at \(store.lastLSN)")
                let rows = try store.snapshot("big").rows
                let byID = Dictionary(uniqueKeysWithValues: try rows.map { ($0.id, try JSONDecoder().decode(Big.self, from: $0.json).i) })
                for k in 0..<8 {
                    let id = "big-\((last.i * 8 + k) % 32)"
                    #expect((byID[id] ?? -1) >= last.i, "round \(round): row \(id) holds write \(byID[id] ?? -1), older than acknowledged write \(last.i)")
                }
            }
            #expect(killedAfterAck == rounds)
            print("commit kills: \(rounds) rounds, \(acknowledged) commits acknowledged")
        }
    }
}
