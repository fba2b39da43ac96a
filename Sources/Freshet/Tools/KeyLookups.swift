import Foundation
import FreshetLMDB
import Synchronization

/// `verify`'s lookup of every stored key (``Store/lookUpProblem(key:value:in:db:name:namer:)``)
/// of the log when its tree fails its key-order check (``KeyOrderCheck``; a healthy store's
/// log is never looked up), shared by two threads: the caller's, in the read transaction that reached
/// the end of the log, and a helper's, in a read transaction of its own that reads the same
/// snapshot. The log is most of a large store's keys (1,000,000 of W5's 1,270,000), and after
/// the fold the second core has nothing else to do (docs/performance.md, "Issue 8 speed round
/// 5 (verify)").
///
/// Both threads walk the whole database with a cursor in key order, counting entries; the
/// entries are cut into blocks of ``blockSize`` consecutive ones, and each thread looks up
/// only the blocks it claims from a shared counter (claimed in increasing order, each by one
/// thread), skipping the others. A problem is kept with its entry's number, so the two
/// threads' problems merge into the order one thread would have found them in. Counting
/// entries rather than splitting by key keeps this right on a damaged store: two walks of one
/// snapshot read the same pages in the same order, whatever their keys say, while a walk
/// started at a key descends through branch pages, which may be the damage looked for.
///
/// LMDB transactions belong to one thread each (`MDB_NOTLS` lets a read transaction move
/// between threads, never be used by two at once). The helper's transaction reads the same
/// pages only when no write transaction committed between the two began: ``Transaction/snapshotID``
/// (`mdb_txn_id`) tells. When they differ (an app wrote to a live store meanwhile) the helper
/// looks nothing up and the caller claims every block itself, so the lookups always check the
/// snapshot the comparison read.
final class SharedKeyLookups: @unchecked Sendable {
    // `@unchecked`: `nextBlock` is atomic; `helperResult` is read and written with `condition`
    // locked; the rest is immutable.

    /// Entries per block: small enough that the two threads end within a block's lookups of
    /// each other, large enough that claiming costs nothing (245 claims on W5's log).
    static let blockSize = 4096

    let db: Database
    let name: String
    let namer: DifferenceNamer
    let blockSize: Int
    private let nextBlock = Atomic<Int>(0)
    private let condition = NSCondition()
    private var helperResult: Result<Share, any Error>?

    /// What one thread looked up: the problems with their entries' numbers, and how many blocks.
    struct Share {
        var problems: [(entry: Int, problem: StoreProblem)] = []
        var blocks = 0
        /// Keys looked up (`mdb_get`).
        var lookups = 0
        /// False when the helper's transaction read another snapshot (it then looked nothing up).
        var sameSnapshot = true
    }

    let hooks: VerifyHooks

    init(db: Database, name: String, namer: DifferenceNamer, blockSize: Int = SharedKeyLookups.blockSize, hooks: VerifyHooks = VerifyHooks()) {
        precondition(blockSize > 0, "SharedKeyLookups blockSize must be positive")
        self.db = db
        self.name = name
        self.namer = namer
        self.blockSize = blockSize
        self.hooks = hooks
    }

    /// Starts the helper thread: it begins a read transaction of `env`, and when that reads the
    /// snapshot `snapshotID` (the caller's transaction's), looks up the blocks it claims.
    /// ``finish(lookingUpIn:)`` or ``waitForHelper()`` must follow, on every path.
    func startHelper(env: Environment, snapshotID: Int) {
        let thread = Thread { [self] in
            hooks.beforeHelperTransaction()
            let result = Result { () throws -> Share in
                try env.read { txn in
                    guard txn.snapshotID == snapshotID else { return Share(sameSnapshot: false) }
                    return try lookUp(in: txn)
                }
            }
            if case .success(let share) = result { hooks.helperDone(share.sameSnapshot, share.blocks) }
            condition.lock()
            helperResult = result
            condition.broadcast()
            condition.unlock()
        }
        thread.name = "freshet.verify"
        thread.start()
    }

    /// Looks up the blocks the helper has not claimed, in `txn` (the caller's transaction, on
    /// its thread), waits for the helper and returns every problem in entry order.
    /// - Throws: an LMDB error of either thread's walk or lookups.
    func finish(lookingUpIn txn: borrowing Transaction) throws -> [StoreProblem] {
        hooks.beforeCallerLookups()
        let own: Result<Share, any Error> = Result { try lookUp(in: txn) }
        if case .success(let share) = own { hooks.callerLookupsDone(share.blocks) }
        let helper = waitForHelper()
        let (mine, theirs) = (try own.get(), try helper.get())
        hooks.lookedUp(name, mine.lookups + theirs.lookups)
        var all = mine.problems + theirs.problems
        all.sort { $0.entry < $1.entry }
        return all.map(\.problem)
    }

    /// Waits for the helper to end (also when the caller failed before ``finish(lookingUpIn:)``).
    func waitForHelper() -> Result<Share, any Error> {
        condition.lock()
        defer { condition.unlock() }
        while helperResult == nil { condition.wait() }
        // Non-nil: the loop above waited for it.
        return helperResult ?? .success(Share())
    }

    private func claim() -> Int {
        nextBlock.add(1, ordering: .relaxed).oldValue
    }

    /// Walks `db` in `txn`, looking up the entries of the blocks this thread claims.
    private func lookUp(in txn: borrowing Transaction) throws -> Share {
        var share = Share()
        try txn.withCursor(db) { cursor in
            var block = claim()
            var entry = 0
            while try cursor.next() {
                defer { entry += 1 }
                if entry >= (block + 1) * blockSize {
                    // Past this thread's block: the next unclaimed one is this one or later.
                    block = claim()
                }
                guard entry >= block * blockSize else { continue }
                if entry == block * blockSize { share.blocks += 1 }
                share.lookups += 1
                let problem = try cursor.withEntry { key, value in
                    try Store.lookUpProblem(key: key, value: value, in: txn, db: db, name: name, namer: namer)
                }
                if let problem { share.problems.append((entry, problem)) }
            }
        }
        return share
    }
}

/// One tree's key-order check (``DataFile/Snapshot/checkKeyOrder(of:)``) on a thread of its own:
/// `verify` checks the log's, its largest tree (1,000,000 of W5's 1,270,000 keys), beside the
/// comparison. The check reads only the snapshot's map, never the transaction, so it needs no
/// transaction of its own; the caller's must live until ``wait()`` returns.
final class KeyOrderCheck: @unchecked Sendable {
    // `@unchecked`: `trees` is used by the thread only, after `init` hands it over; `outcome`
    // is read and written with `condition` locked; `tree` is immutable.
    private let condition = NSCondition()
    /// Nil until the check ends; then `.some(nil)` when the tree passed, else why not.
    private var outcome: DataFileDamage??
    private let trees: DataFile.Snapshot?
    private let tree: DataFile.Tree?

    /// Starts checking `tree` of `trees` (which no other thread may use from now on).
    init(_ trees: DataFile.Snapshot, tree: DataFile.Tree) {
        self.trees = trees
        self.tree = tree
        let thread = Thread { [self] in
            let refusal: DataFileDamage?
            do throws(DataFileDamage) {
                // Both set: this initializer set them.
                guard let trees = self.trees, let tree = self.tree else { throw DataFileDamage(page: nil, "no tree to check") }
                try trees.checkKeyOrder(of: tree)
                refusal = nil
            } catch {
                refusal = error
            }
            condition.lock()
            outcome = .some(refusal)
            condition.broadcast()
            condition.unlock()
        }
        thread.name = "freshet.verify.keys"
        thread.start()
    }

    /// A check already refused (its record could not be read): no thread.
    init(refused: DataFileDamage) {
        outcome = .some(refused)
        trees = nil
        tree = nil
    }

    /// Waits for the check to end: nil when the tree passed, else why it did not.
    func wait() -> DataFileDamage? {
        condition.lock()
        defer { condition.unlock() }
        while outcome == nil { condition.wait() }
        // Non-nil: the loop above waited for it.
        return outcome ?? nil
    }
}

/// Test seams of `verify`'s key-order checks and lookups (``SharedKeyLookups`` for the log's);
/// the defaults do nothing.
struct VerifyHooks: Sendable {
    /// False: no tree is checked for its key order, and every database's keys are looked up
    /// (the path of a database whose check fails).
    var checksKeyOrder = true
    /// A database's tree was checked (``DataFile/Snapshot/checkKeyOrder(of:in:)``): nil when it
    /// passed (its keys are not looked up), else why it did not.
    var keyOrderChecked: @Sendable (_ database: String, _ refusal: DataFileDamage?) -> Void = { _, _ in }
    /// A database's keys were looked up: this many `mdb_get` lookups (both threads' for the log).
    var lookedUp: @Sendable (_ database: String, _ lookups: Int) -> Void = { _, _ in }
    /// Runs on the helper thread before it begins its read transaction: a test commits a write
    /// here to make the snapshots differ, or waits to let the caller claim every block.
    var beforeHelperTransaction: @Sendable () -> Void = {}
    /// Runs on the caller's thread before it looks up its share of the blocks (after the
    /// comparison and the other databases' lookups): a test waits here for the helper.
    var beforeCallerLookups: @Sendable () -> Void = {}
    /// The caller has looked up its share (this many blocks) and is about to wait for the helper.
    var callerLookupsDone: @Sendable (_ blocks: Int) -> Void = { _ in }
    /// The helper ended: whether its transaction read the caller's snapshot, and how many
    /// blocks it looked up.
    var helperDone: @Sendable (_ sameSnapshot: Bool, _ blocks: Int) -> Void = { _, _ in }
}
