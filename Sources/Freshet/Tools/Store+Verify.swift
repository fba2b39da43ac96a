import Foundation
import FreshetLMDB

extension Store {
    /// Checks the store against its own log: every record decodes and passes its CRC-32C,
    /// LSNs run on without a gap from 1 (from the latest checkpoint's `throughLSN` after a
    /// compaction, whose kept records must decode), and folding the log into memory (``MemoryTables``) with the same
    /// ``Fold`` yields the materialized databases byte for byte (`rows`, `rowIndex`, `marks`,
    /// `meta`, `pending`, `mutations`, `idMap`, `confirmed`) — SyncMarks as read, with the stamp
    /// journal applied (``MarkStamps``; docs/log-format.md §9.1). Then every stored key of those
    /// databases and of `log` must be found by a lookup (`mdb_get`) as that very entry: a
    /// damaged key in a branch page misleads lookups only. Each database's tree is first
    /// walked in key order in the same snapshot (``DataFile/Snapshot/checkKeyOrder(of:in:)``:
    /// leaf keys increasing, each branch separator between its neighbouring subtrees, the
    /// record's counts; the log's on a second thread, ``KeyOrderCheck``, beside the comparison),
    /// which proves that every lookup finds its entry; only a database whose
    /// tree fails that check has its keys looked up, one `mdb_get` each
    /// (``lookUpEveryKey(source:databases:namer:hooks:)``; the log's keys on two threads,
    /// ``SharedKeyLookups``), so its problems are the lookups' own. The store is only read.
    ///
    /// Every difference is a ``StoreProblem`` naming the database, the collection, the row ID
    /// and the LSN of the last record that (according to the replay) wrote that value.
    ///
    /// On a live store the log is read in short read transactions up to the LSN that was last
    /// when `verify` started; one more read transaction then folds what was appended meanwhile
    /// and reads the materialized databases, so both are compared at the same LSN; the trees'
    /// checks read that snapshot (through a read-only map of `data.mdb`, whose pages of the
    /// snapshot LMDB keeps unchanged while the transaction lives), and the log's lookups, if
    /// any, on the second thread check it too, or are left to the first.
    /// Memory: the replayed state only (both sides are compared where they lie); a map of the
    /// data file (address space, no copy).
    ///
    /// - Throws: ``ToolError/store`` when the store or the scratch store cannot be read.
    public func verify() throws(ToolError) -> VerifyReport {
        try verify(hooks: VerifyHooks())
    }

    /// ``verify()`` with test seams; `lookupBlock` is ``SharedKeyLookups/blockSize`` unless a
    /// test asks for smaller blocks.
    func verify(hooks: VerifyHooks, lookupBlock: Int = SharedKeyLookups.blockSize) throws(ToolError) -> VerifyReport {
        let (report, scratch) = try verifyReplaying(hooks: hooks, lookupBlock: lookupBlock)
        ScratchState.releaseInBackground(consume scratch)
        return report
    }

    /// The folding and checking of ``verify(hooks:lookupBlock:)``: the report and the replayed state.
    private func verifyReplaying(hooks: VerifyHooks, lookupBlock: Int) throws(ToolError) -> (VerifyReport, ScratchState) {
        do {
            try checkOpen()
            let folder = try LogFolder(store: self)
            var problems: [StoreProblem] = []
            var compared = 0
            let startLSN = try folder.sourceLastLSN()
            try folder.run(to: .end, unchunkedAfter: startLSN, atEnd: { txn in
                let dbs = self.state.dbs
                let namer = try Self.namer(folder.scratch)
                // Each database's tree is checked for LMDB's search to find every key; only a
                // database whose check fails has its keys looked up. The log's tree, the
                // largest, is checked on a second thread while this one compares and checks
                // the others (each check through a map of its own: a `DataFile` is one thread's).
                let logCheck = hooks.checksKeyOrder ? Self.startKeyOrderCheck(of: dbs.log, in: txn, env: self.env) : nil
                let trees = hooks.checksKeyOrder ? Self.trees(of: txn, in: self.env) : nil
                let rest: Result<([StoreProblem], Int, [StoreProblem]), any Error> = Result {
                    let (differences, count) = try Self.compare(source: txn, dbs: dbs, scratch: folder.scratch, namer: namer)
                    let unproven = Self.materialized(dbs).filter { Self.needsLookups($0.0, $0.1, trees, in: txn, hooks: hooks) }
                    let others = try Self.lookUpEveryKey(source: txn, databases: unproven, namer: namer, hooks: hooks)
                    return (differences, count, others)
                }
                // Waited for on every path: it reads the snapshot `txn` holds.
                var logNeedsLookups = true
                if let logCheck {
                    let refusal = logCheck.wait()
                    hooks.keyOrderChecked("log", refusal)
                    logNeedsLookups = refusal != nil
                }
                let (differences, count, others) = try rest.get()
                var logProblems: [StoreProblem] = []
                if logNeedsLookups {
                    // The log's lookups on two threads: a helper's, and this one's (the blocks
                    // the helper has not claimed).
                    let logLookups = SharedKeyLookups(db: dbs.log, name: "log", namer: namer, blockSize: lookupBlock, hooks: hooks)
                    logLookups.startHelper(env: self.env, snapshotID: txn.snapshotID)
                    logProblems = try logLookups.finish(lookingUpIn: txn)
                }
                // Problems in the order one thread finds them: the comparison, then the
                // lookups database by database, the log first. A database whose tree passed
                // its check has none: every lookup would have found its entry.
                problems = differences + logProblems + others
                compared = count
            })
            let report = VerifyReport(recordCount: folder.recordCount, lastLSN: folder.lastSeen, comparedEntries: compared, problems: folder.problems + problems)
            return (report, folder.scratch)
        } catch {
            throw ToolError.wrapping(error, doing: "verifying \(displayPath)")
        }
    }

    /// Compares every materialized database of the source (read in `source`) with the scratch
    /// one, walking both in key order side by side: the replayed entries as the scratch tables
    /// lend them, the stored ones with a cursor, compared in place (`memcmp`), so only a
    /// difference copies bytes. Before issue 8's speed round 5 every replayed entry was first
    /// copied into arrays (two allocations per entry, ~270,000 on W5).
    ///
    /// At each step the smaller key goes first: a replayed key before the stored one is missing
    /// from the store, a stored key before the replayed one is not in the replay, equal keys
    /// compare their values. Each key counts once in the returned number of entries compared.
    ///
    /// The replay folds without the stamp journal (``MarkStamps``), so the stored side is
    /// read as marks: a `marks` entry the journal stamps is compared with the journal's LSNs
    /// in place of its own, and the journal's own `meta` entry is not compared. A journal that
    /// does not decode, and a stamp readers ignore (it names no mark, or is not newer than its
    /// mark), are problems of `meta` (``journalProblems(_:source:dbs:)``).
    private static func compare(source: borrowing Transaction, dbs: StoreDatabases, scratch: ScratchState, namer: DifferenceNamer) throws -> ([StoreProblem], Int) {
        var problems: [StoreProblem] = []
        var compared = 0
        var stamps = MarkStamps()
        do {
            stamps = try MarkStamps.read(dbs.meta, in: source)
        } catch let error as StoreError where error.code == .corruptRecord {
            problems.append(StoreProblem(database: "meta", message: error.message + "; every SyncMark is compared as `marks` stores it"))
        }
        for ((name, stored), (_, rebuilt)) in zip(materialized(dbs), materialized(scratch.state.dbs)) {
            /// A stored `marks` entry as the store reads it when the journal stamps it (nil:
            /// compared as stored; so is a mark that does not decode, and it differs).
            func journaled(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> [UInt8]? {
                guard name == "marks", !stamps.isEmpty else { return nil }
                let k = Array(key)
                guard let stamp = stamps.stamp(for: k) else { return nil }
                do {
                    let mark = try SyncMark.decode(Array(value))
                    guard stamps.applies(stamp, over: mark.lastLSN) else { return nil }
                    return stamps.applied(to: mark, name: k).encoded()
                } catch {
                    return nil
                }
            }
            /// A difference of `marks` names the journal when its LSNs came from there.
            func noted(_ problem: StoreProblem, journaled: Bool) -> StoreProblem {
                guard journaled else { return problem }
                var p = problem
                p.message += " (lastLSN and rowsLSN as the stamp journal, meta \"markStamps\", gives them)"
                return p
            }
            try source.withCursor(stored) { cursor in
                /// Moves to the next stored entry, past the journal's in `meta`.
                func advance() throws {
                    try cursor.next()
                    while name == "meta", cursor.isOnEntry, cursor.withEntry({ k, _ in k.elementsEqual(MetaKey.markStamps) }) {
                        try cursor.next()
                    }
                }
                /// Reports the stored entry the cursor is on as one the replay lacks, and moves on.
                func storedOnly() throws {
                    cursor.withEntry { key, value in
                        let read = journaled(key, value)
                        problems.append(noted(namer.name(database: name, key: Array(key), stored: read ?? Array(value), replayed: nil), journaled: read != nil))
                    }
                    compared += 1
                    try advance()
                }
                try advance()
                try scratch.tables.forEach(rebuilt) { key, value in
                    while cursor.isOnEntry, cursor.withEntry({ storedKey, _ in OrderedTable.compare(key, storedKey) > 0 }) {
                        try storedOnly()
                    }
                    compared += 1
                    let same: Bool? = cursor.isOnEntry ? cursor.withEntry { storedKey, storedValue in
                        guard OrderedTable.compare(key, storedKey) == 0 else { return nil }
                        if let read = journaled(storedKey, storedValue) { return MaterializedState.same(value, read) }
                        return MaterializedState.same(storedValue, value)
                    } : nil
                    switch same {
                    case nil:
                        problems.append(namer.name(database: name, key: Array(key), stored: nil, replayed: Array(value)))
                    case false?:
                        cursor.withEntry { storedKey, storedValue in
                            let read = journaled(storedKey, storedValue)
                            problems.append(noted(namer.name(database: name, key: Array(key), stored: read ?? Array(storedValue), replayed: Array(value)), journaled: read != nil))
                        }
                        try advance()
                    case true?:
                        try advance()
                    }
                    return true
                }
                while cursor.isOnEntry { try storedOnly() }
            }
        }
        return (problems + (try journalProblems(stamps, source: source, dbs: dbs)), compared)
    }

    /// The stamps of the journal that readers ignore (``MarkStamps/ignored(marks:in:)``), and
    /// a journal over its limits. The writer never leaves either: they come from a hand-edited
    /// or damaged store. Harmless to reads (ignored), they are reported as `meta` problems.
    private static func journalProblems(_ stamps: MarkStamps, source: borrowing Transaction, dbs: StoreDatabases) throws -> [StoreProblem] {
        var problems: [StoreProblem] = []
        if stamps.isOverfull {
            problems.append(StoreProblem(database: "meta", message: "the stamp journal (markStamps) holds \(stamps.count) entries (\(stamps.byteCount) bytes), over its limits of \(MarkStamps.maxEntries) entries and \(MarkStamps.maxBytes) bytes"))
        }
        for (stamp, why) in try stamps.ignored(marks: dbs.marks, in: source) {
            let message = switch why {
            case .noMark: "the stamp journal (markStamps) stamps a collection with no SyncMark; readers ignore the stamp"
            case .notNewer(let markLSN): "the stamp journal (markStamps) has lastLSN \(stamp.lastLSN), not newer than the SyncMark's \(markLSN); readers ignore the stamp"
            }
            problems.append(StoreProblem(database: "meta", collection: String(decoding: stamp.name, as: UTF8.self), lsn: stamp.lastLSN, message: message))
        }
        return problems
    }

    /// The materialized databases by name, in the order `verify` compares them and reports
    /// their problems (`StoreDatabases.names` without the log).
    private static func materialized(_ dbs: StoreDatabases) -> [(String, Database)] {
        [("rows", dbs.rows), ("rowIndex", dbs.rowIndex), ("marks", dbs.marks), ("meta", dbs.meta),
         ("pending", dbs.pending), ("mutations", dbs.mutations), ("idMap", dbs.idMap), ("confirmed", dbs.confirmed)]
    }

    /// A namer that takes a problem's LSN from the replayed SyncMarks.
    private static func namer(_ scratch: ScratchState) throws -> DifferenceNamer {
        var marks: [String: SyncMark] = [:]
        for name in try scratch.state.collections(in: scratch.tables) {
            marks[name] = try scratch.state.syncMark(name, in: scratch.tables)
        }
        return DifferenceNamer(replayedMarks: marks)
    }

    /// The pages of `txn`'s snapshot of `env`'s data file, mapped for the key-order checks
    /// (``DataFile/Snapshot``); nil when the file cannot be opened or mapped, or when its meta
    /// pages no longer hold that snapshot (every database's keys are then looked up).
    private static func trees(of txn: borrowing Transaction, in env: Environment) -> DataFile.Snapshot? {
        let file: DataFile
        do {
            file = try DataFile(path: env.path + "/data.mdb")
        } catch {
            return nil  // the lookups check every key instead (this function's contract)
        }
        return DataFile.Snapshot(file: file, snapshotID: txn.snapshotID)
    }

    /// Starts the key-order check of `db`'s tree in `txn`'s snapshot on a thread of its own
    /// (``KeyOrderCheck``), through a map of `env`'s data file of its own; nil when the file
    /// cannot be opened or mapped for that snapshot (see ``trees(of:in:)``).
    private static func startKeyOrderCheck(of db: Database, in txn: borrowing Transaction, env: Environment) -> KeyOrderCheck? {
        guard let trees = Self.trees(of: txn, in: env) else { return nil }
        do {
            return KeyOrderCheck(trees, tree: try trees.record(of: db, in: txn))
        } catch {
            return KeyOrderCheck(refused: error)
        }
    }

    /// Whether `db`'s keys must be looked up: true unless its tree in `txn` passes
    /// ``DataFile/Snapshot/checkKeyOrder(of:in:)`` (LMDB's search then finds every key where
    /// the cursor walk does, and each lookup would find that very entry). Always true without
    /// `trees`.
    private static func needsLookups(_ name: String, _ db: Database, _ trees: DataFile.Snapshot?, in txn: borrowing Transaction, hooks: VerifyHooks) -> Bool {
        guard let trees else { return true }
        do {
            try trees.checkKeyOrder(of: db, in: txn)
            hooks.keyOrderChecked(name, nil)
            return false
        } catch {
            hooks.keyOrderChecked(name, error)
            return true
        }
    }

    /// Looks up every stored key of `databases` (name and handle, in that order) with `mdb_get`
    /// and checks it finds that very entry (the same value bytes); the log's keys are looked up
    /// by ``SharedKeyLookups``, on two threads. Only databases whose tree failed its key-order
    /// check (``needsLookups(_:_:_:in:hooks:)``) come here.
    ///
    /// A cursor walk reads leaf pages left to right and never uses the keys in branch pages;
    /// a lookup descends through them. A damaged branch key sends a lookup to the wrong child,
    /// so the fold's own lookups (``MaterializedState`` reads `rowIndex`, `rows`, the log by
    /// key) would miss an entry that the walk in ``compare(source:dbs:scratch:namer:)`` still
    /// sees (trial finding 4). A cursor reused for the lookups (`MDB_SET`) would not do: when
    /// the key is on the page the cursor is on, LMDB searches that page only and reads no
    /// branch page (`mdb_cursor_set` in mdb.c); `mdb_get` starts from the root every time.
    private static func lookUpEveryKey(source: borrowing Transaction, databases: [(String, Database)], namer: DifferenceNamer, hooks: VerifyHooks) throws -> [StoreProblem] {
        var problems: [StoreProblem] = []
        for (name, db) in databases {
            var lookups = 0
            try source.forEach(db) { key, value in
                lookups += 1
                if let problem = try lookUpProblem(key: key, value: value, in: source, db: db, name: name, namer: namer) {
                    problems.append(problem)
                }
                return true
            }
            hooks.lookedUp(name, lookups)
        }
        return problems
    }

    /// Looks up `key` (an entry of `db` a cursor is on, whose value is `value`) in `txn`: nil
    /// when the lookup finds that very entry; else a ``StoreProblem`` "a lookup does not find
    /// it (damaged index page?)", or, when it finds other bytes, "a lookup finds a different
    /// value". The key is looked up as the cursor lends it, with no copy.
    static func lookUpProblem(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, in txn: borrowing Transaction,
                              db: Database, name: String, namer: DifferenceNamer) throws -> StoreProblem? {
        // The same entry lends the same bytes of the map: comparing the address is enough
        // then, and only another answer is compared byte for byte.
        let found = try txn.withValue(db, key: key) { found in
            found.baseAddress == value.baseAddress && found.count == value.count || MaterializedState.same(value, found)
        }
        switch found {
        case true?:
            return nil
        case false?:
            return namer.name(database: name, key: Array(key), stored: Array(value), replayed: nil,
                              message: "a lookup finds a different value (damaged index page?)")
        case nil:
            return namer.name(database: name, key: Array(key), stored: Array(value), replayed: nil,
                              message: "a lookup does not find it (damaged index page?)")
        }
    }
}
