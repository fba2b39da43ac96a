import Foundation
import FreshetLMDB

extension Store {
    /// Checks the store against its own log: every record decodes and passes its CRC-32C,
    /// LSNs run on without a gap from 1 (from the latest checkpoint's `throughLSN` after a
    /// compaction, whose kept records must decode), and folding the log into memory (``MemoryTables``) with the same
    /// ``Fold`` yields the materialized databases byte for byte (`rows`, `rowIndex`, `marks`,
    /// `meta`, `pending`, `mutations`, `idMap`, `confirmed`). Then every stored key of those
    /// databases and of `log` is looked up (`mdb_get`) and must find that very entry: a damaged
    /// key in a branch page misleads lookups only (``lookUpEveryKey(source:dbs:namer:)``). The
    /// store is only read.
    ///
    /// Every difference is a ``StoreProblem`` naming the database, the collection, the row ID
    /// and the LSN of the last record that (according to the replay) wrote that value.
    ///
    /// On a live store the log is read in short read transactions up to the LSN that was last
    /// when `verify` started; one more read transaction then folds what was appended meanwhile
    /// and reads the materialized databases, so both are compared at the same LSN. Memory: the replayed state of one database is held while it is compared.
    ///
    /// - Throws: ``ToolError/store`` when the store or the scratch store cannot be read.
    public func verify() throws(ToolError) -> VerifyReport {
        do {
            try checkOpen()
            let folder = try LogFolder(store: self)
            var problems: [StoreProblem] = []
            var compared = 0
            let startLSN = try folder.sourceLastLSN()
            try folder.run(to: .end, unchunkedAfter: startLSN, atEnd: { txn in
                (problems, compared) = try Self.compare(source: txn, dbs: self.state.dbs, scratch: folder.scratch)
                problems += try Self.lookUpEveryKey(source: txn, dbs: self.state.dbs, namer: Self.namer(folder.scratch))
            })
            return VerifyReport(recordCount: folder.recordCount, lastLSN: folder.lastSeen, comparedEntries: compared, problems: folder.problems + problems)
        } catch {
            throw ToolError.wrapping(error, doing: "verifying \(displayPath)")
        }
    }

    /// Compares every materialized database of the source (read in `source`) with the scratch one.
    private static func compare(source: borrowing Transaction, dbs: StoreDatabases, scratch: ScratchState) throws -> ([StoreProblem], Int) {
        let replayed = scratch.state.dbs
        let pairs: [(String, Database, Database)] = [
            ("rows", dbs.rows, replayed.rows), ("rowIndex", dbs.rowIndex, replayed.rowIndex),
            ("marks", dbs.marks, replayed.marks), ("meta", dbs.meta, replayed.meta),
            ("pending", dbs.pending, replayed.pending), ("mutations", dbs.mutations, replayed.mutations),
            ("idMap", dbs.idMap, replayed.idMap), ("confirmed", dbs.confirmed, replayed.confirmed),
        ]
        let namer = try namer(scratch)
        var problems: [StoreProblem] = []
        var compared = 0
        for (name, stored, rebuilt) in pairs {
            // The replayed entries in key order; the stored ones are walked in the same order
            // and compared in place (memcmp), so only a difference copies bytes.
            let expected = scratch.tables.entries(rebuilt)
            var i = 0
            try source.forEach(stored) { keyBuffer, valueBuffer in
                var order = -1
                while i < expected.count {
                    order = expected[i].key.withUnsafeBytes { OrderedTable.compare($0, keyBuffer) }
                    guard order < 0 else { break }
                    problems.append(namer.name(database: name, key: expected[i].key, stored: nil, replayed: expected[i].value))
                    compared += 1
                    i += 1
                }
                compared += 1
                if i < expected.count, order == 0 {
                    if !MaterializedState.same(valueBuffer, expected[i].value) {
                        problems.append(namer.name(database: name, key: Array(keyBuffer), stored: Array(valueBuffer), replayed: expected[i].value))
                    }
                    i += 1
                } else {
                    problems.append(namer.name(database: name, key: Array(keyBuffer), stored: Array(valueBuffer), replayed: nil))
                }
                return true
            }
            while i < expected.count {
                problems.append(namer.name(database: name, key: expected[i].key, stored: nil, replayed: expected[i].value))
                compared += 1
                i += 1
            }
        }
        return (problems, compared)
    }

    /// A namer that takes a problem's LSN from the replayed SyncMarks.
    private static func namer(_ scratch: ScratchState) throws -> DifferenceNamer {
        var marks: [String: SyncMark] = [:]
        for name in try scratch.state.collections(in: scratch.tables) {
            marks[name] = try scratch.state.syncMark(name, in: scratch.tables)
        }
        return DifferenceNamer(replayedMarks: marks)
    }

    /// Looks up every stored key of the log and the materialized databases with `mdb_get`
    /// and checks it finds that very entry (the same value bytes).
    ///
    /// A cursor walk reads leaf pages left to right and never uses the keys in branch pages;
    /// a lookup descends through them. A damaged branch key sends a lookup to the wrong child,
    /// so the fold's own lookups (``MaterializedState`` reads `rowIndex`, `rows`, the log by
    /// key) would miss an entry that the walk in ``compare(source:dbs:scratch:)`` still sees
    /// (trial finding 4). Each miss is a ``StoreProblem`` "a lookup does not find it (damaged
    /// index page?)"; a lookup that finds other bytes, "a lookup finds a different value".
    private static func lookUpEveryKey(source: borrowing Transaction, dbs: StoreDatabases, namer: DifferenceNamer) throws -> [StoreProblem] {
        let databases: [(String, Database)] = [
            ("log", dbs.log), ("rows", dbs.rows), ("rowIndex", dbs.rowIndex), ("marks", dbs.marks), ("meta", dbs.meta),
            ("pending", dbs.pending), ("mutations", dbs.mutations), ("idMap", dbs.idMap), ("confirmed", dbs.confirmed),
        ]
        var problems: [StoreProblem] = []
        for (name, db) in databases {
            try source.forEach(db) { keyBuffer, valueBuffer in
                let key = Array(keyBuffer)
                // The same entry lends the same bytes of the map: comparing the address is
                // enough then, and only another answer is compared byte for byte.
                let found = try source.withValue(db, key: key) { value in
                    value.baseAddress == valueBuffer.baseAddress && value.count == valueBuffer.count
                        || MaterializedState.same(valueBuffer, value)
                }
                switch found {
                case true?: break
                case false?:
                    problems.append(namer.name(database: name, key: key, stored: Array(valueBuffer), replayed: nil,
                                               message: "a lookup finds a different value (damaged index page?)"))
                case nil:
                    problems.append(namer.name(database: name, key: key, stored: Array(valueBuffer), replayed: nil,
                                               message: "a lookup does not find it (damaged index page?)"))
                }
                return true
            }
        }
        return problems
    }
}
