import Foundation
@testable import Freshet
import FreshetCommands
import FreshetTesting
@testable import FreshetLMDB
import Dispatch
import Synchronization
import Testing
import TestSupport

/// `verify` looks up the log's keys on two threads (`SharedKeyLookups`): the caller's, in the
/// read transaction that reached the end of the log, and a helper's, in its own transaction of
/// the same snapshot. Whichever thread takes which block, every key is looked up once and the
/// problems come out in the order one thread finds them; when a write commits between the two
/// transactions, the helper looks nothing up and the caller looks up every key.
@Suite("freshet verify: the log's lookups on two threads", .scaledTimeLimit(minutes: 1))
struct VerifyThreadsTests {
    /// Records in the log of ``withLogStore(_:)``.
    static let records = 300
    /// Lookup blocks of this many entries, so a 300-record log has 38 of them.
    static let block = 8
    static var blocks: Int { (records + block - 1) / block }

    /// A closed store whose log holds ``records`` records (`fetched`, one row each, in
    /// `c0` … `c9`, a commit each): enough that the log is two levels deep (a branch page over
    /// its leaves). Vacuumed, so the file holds only the live branch page.
    func withLogStore(_ body: (URL) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            for i in 0..<Self.records {
                try await store.append(.fetched(.init(placement: .upsert, rows: [row("r\(i)")], response: response())), to: "c\(i % 10)")
            }
            store.close()
            // Rewritten compact: a page per commit of the log's branch was left in the file.
            _ = try Vacuum.run(directory: directory.path)
            try await body(directory)
        }
    }

    /// Raises the last byte of the second key of the log's branch page (keys of 8 bytes, LSNs)
    /// and returns the LSN whose lookup now misses (``VerifyLookupTests/raiseBranchKey``).
    func damageLogBranchKey(in directory: URL) throws -> LSN {
        let path = directory.appendingPathComponent("data.mdb").path
        var file = Array(try #require(FileManager.default.contents(atPath: path)))
        // An LSN below 2^16: six zero bytes first (other databases' keys begin with a length and a name).
        let keys = VerifyLookupTests.branchKeys(file) { $0.count == 8 && $0.prefix(6).allSatisfy { $0 == 0 } }
        let branch = try #require(keys.count == 1 ? keys.first : nil, "one log branch page, found \(keys.count)")
        #expect(branch.key.last != 0xFF)
        file[branch.offset + branch.key.count - 1] += 1
        try Data(file).write(to: URL(fileURLWithPath: path))
        return LSN(branch.key.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    /// What each thread looked up in one `verify`.
    struct Split: Sendable {
        var helper: (sameSnapshot: Bool, blocks: Int)?
        var caller: Int?
    }

    /// Verifies `directory` (opened for writing, as an app's own store) with `hooks`, recording
    /// the blocks each thread looked up; `configure` may add to the hooks, given the store.
    func verify(_ directory: URL, checksKeyOrder: Bool = true, configure: (Store, inout VerifyHooks) -> Void = { _, _ in })
        throws -> (report: VerifyReport, split: Split) {
        var configuration = Configuration.test()
        configuration.sendsMutations = false
        let store = try Store(directory: directory, configuration: configuration, dependencies: .test())
        defer { store.close() }
        let split = Mutex(Split())
        var hooks = VerifyHooks()
        hooks.checksKeyOrder = checksKeyOrder
        hooks.helperDone = { same, blocks in split.withLock { $0.helper = (same, blocks) } }
        hooks.callerLookupsDone = { blocks in split.withLock { $0.caller = blocks } }
        configure(store, &hooks)
        let report = try store.verify(hooks: hooks, lookupBlock: Self.block)
        return (report, split.withLock { $0 })
    }

    func expectedProblem(_ lsn: LSN) -> StoreProblem {
        StoreProblem(database: "log", lsn: lsn, message: "a lookup does not find it (damaged index page?)")
    }

    @Test("an intact log looked up (its tree's check left out): the two threads look up every block between them, once each; with the check, no thread starts")
    func intactSplit() async throws {
        try await withLogStore { directory in
            let (report, split) = try verify(directory, checksKeyOrder: false)
            #expect(report.problems == [])
            #expect(report.recordCount == Self.records)
            let helper = try #require(split.helper)
            #expect(helper.sameSnapshot)
            #expect(helper.blocks + (split.caller ?? -1) == Self.blocks)
            // The log's tree passes its check: nothing to look up, no helper thread.
            let checked = try verify(directory)
            #expect(checked.report.problems == [])
            #expect(checked.split.helper == nil && checked.split.caller == nil)
        }
    }

    @Test("a damaged log branch key is named once, whichever thread looks it up: the helper all blocks, the caller all, or shared")
    func damagedKeyAnySplit() async throws {
        try await withLogStore { directory in
            let lsn = try damageLogBranchKey(in: directory)
            #expect(lsn > 1 && lsn <= LSN(UInt64(Self.records)))

            // The caller waits until the helper has looked up every block.
            let helperFirst = try verify(directory) { _, hooks in
                let done = DispatchSemaphore(value: 0)
                let report = hooks.helperDone
                hooks.helperDone = { report($0, $1); done.signal() }
                hooks.beforeCallerLookups = { done.wait() }
            }
            #expect(helperFirst.report.problems == [expectedProblem(lsn)])
            #expect(helperFirst.split.helper?.sameSnapshot == true)
            #expect(helperFirst.split.helper?.blocks == Self.blocks)
            #expect(helperFirst.split.caller == 0)

            // The helper begins only after the caller has looked up every block.
            let callerFirst = try verify(directory) { _, hooks in
                let done = DispatchSemaphore(value: 0)
                let report = hooks.callerLookupsDone
                hooks.callerLookupsDone = { report($0); done.signal() }
                hooks.beforeHelperTransaction = { done.wait() }
            }
            #expect(callerFirst.report.problems == [expectedProblem(lsn)])
            #expect(callerFirst.split.helper?.sameSnapshot == true)
            #expect(callerFirst.split.helper?.blocks == 0)
            #expect(callerFirst.split.caller == Self.blocks)

            // Neither waits.
            let shared = try verify(directory)
            #expect(shared.report.problems == [expectedProblem(lsn)])
            #expect((shared.split.helper?.blocks ?? -1) + (shared.split.caller ?? -1) == Self.blocks)

            let run = runTool(["verify", directory.path])
            #expect(run.status == 1)
            #expect(run.stdout == ["PROBLEM  \(expectedProblem(lsn))"])
        }
    }

    @Test("a write committed between the two transactions: the helper looks nothing up, the caller every key")
    func writeBetweenTransactions() async throws {
        try await withLogStore { directory in
            let lsn = try damageLogBranchKey(in: directory)
            let (report, split) = try verify(directory) { store, hooks in
                // Rewrites meta.lastLSN with the value it has: a commit that changes nothing
                // verify compares, but makes a new snapshot.
                hooks.beforeHelperTransaction = {
                    let meta = store.state.dbs.meta
                    let result = Result {
                        try store.env.write { txn in
                            let value = try #require(try txn.get(meta, key: MetaKey.lastLSN))
                            try txn.put(meta, key: MetaKey.lastLSN, value: value)
                        }
                    }
                    #expect(throws: Never.self) { try result.get() }
                }
            }
            #expect(report.problems == [expectedProblem(lsn)])
            #expect(split.helper?.sameSnapshot == false)
            #expect(split.helper?.blocks == 0)
            #expect(split.caller == Self.blocks)
            // The rewrite left the store as it was.
            let again = try verify(directory)
            #expect(again.report.problems == [expectedProblem(lsn)])
        }
    }
}
