import Foundation
import FreshetLMDB

/// A throwaway LMDB environment in a temporary directory (`MDB_NOSYNC`: nothing is flushed),
/// holding the same named databases as a store, into which tools fold a log with the store's
/// own ``Fold``. ``remove()`` closes it and deletes the directory.
final class ScratchState {
    let env: Environment
    let state: MaterializedState
    let path: String
    private var removed = false

    /// Creates the scratch environment with room for `mapSize` bytes (virtual: the file grows
    /// only as pages are used).
    init(mapSize: Int) throws(StoreError) {
        var template = Array((NSTemporaryDirectory() + "/freshet-scratch-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw StoreError(.storage, "cannot create a scratch directory in \(NSTemporaryDirectory()): errno \(errno)")
        }
        let path = String(cString: made)
        do {
            let env = try Environment(path: path, mapSize: mapSize, maxDatabases: StoreDatabases.names.count + 2, sync: .noSync)
            let dbs = try env.write { txn in
                let dbs = try StoreDatabases.open(in: txn, create: true)
                try txn.put(dbs.meta, key: MetaKey.formatVersion, value: [LogRecord.formatVersion])
                return dbs
            }
            self.env = env
            self.state = MaterializedState(dbs: dbs)
            self.path = path
        } catch {
            Self.deleteDirectory(path)
            throw StoreError(error, doing: "creating a scratch store in \(path)")
        }
    }

    deinit { remove() }

    /// Folds `records` in one write transaction, keeping the bytes of `mutationProposed`
    /// records in the scratch log (the only ones the fold reads back), then records the last
    /// LSN in `meta` as the store's writer does.
    ///
    /// A record the fold refuses (a confirmation whose proposal was unreadable, say) does not
    /// stop the replay: the chunk is folded again with each record in a nested transaction,
    /// and the refused ones are returned as problems.
    func fold(_ records: [(record: LogRecord, bytes: [UInt8])]) throws(StoreError) -> [StoreProblem] {
        guard let last = records.last else { return [] }
        let wholeChunkFailure: any Error
        do {
            try write(records, last: last.record.lsn, isolated: false)
            return []
        } catch {
            wholeChunkFailure = error
        }
        do {
            return try write(records, last: last.record.lsn, isolated: true)
        } catch {
            // Not a record the fold refuses but the scratch store itself (a full map, a disk error).
            throw StoreError(error, doing: "folding LSN \(records[0].record.lsn)…\(last.record.lsn) into the scratch store (first: \(wholeChunkFailure))")
        }
    }

    @discardableResult
    private func write(_ records: [(record: LogRecord, bytes: [UInt8])], last: LSN, isolated: Bool) throws -> [StoreProblem] {
        // SyncMarks decoded once and written once per chunk, as the store's writer does per commit.
        let marks = SyncMarkCache()
        let folding = MaterializedState(dbs: state.dbs, marks: marks)
        return try env.write { txn in
            var problems: [StoreProblem] = []
            for (record, bytes) in records {
                func apply(_ t: borrowing Transaction) throws {
                    // The fold and the pending overlay read back only proposals from the log
                    // (a confirmation or rollback finds its proposal by LSN): the scratch log
                    // keeps those and nothing else.
                    if case .mutationProposed = record.event {
                        try t.put(state.dbs.log, key: record.lsn.keyBytes, value: bytes, append: true)
                    }
                    try Fold.apply(record, to: folding, in: t)
                }
                if isolated {
                    let saved = marks.checkpoint()
                    do {
                        try txn.nested { child in try apply(child) }
                    } catch {
                        marks.restore(saved)
                        problems.append(StoreProblem(database: "log", collection: record.collection, lsn: record.lsn,
                                                     message: "\(record.kind.name) does not fold: \(StoreError(error, doing: "folding").message)"))
                    }
                } else {
                    try apply(txn)
                }
            }
            try marks.flush(into: txn, database: state.dbs.marks)
            try txn.put(state.dbs.meta, key: MetaKey.lastLSN, value: last.keyBytes)
            return problems
        }
    }

    /// Closes the environment and deletes its directory; calling it again does nothing.
    func remove() {
        guard !removed else { return }
        removed = true
        env.close()
        Self.deleteDirectory(path)
    }

    /// Best effort: a scratch directory left in the temporary directory is harmless.
    private static func deleteDirectory(_ path: String) {
        for name in ["data.mdb", "lock.mdb"] { _ = unlink(path + "/" + name) }
        _ = rmdir(path)
    }
}
