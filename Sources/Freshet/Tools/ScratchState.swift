import Foundation
import FreshetLMDB

/// The state tools fold a log into: the store's named databases held in memory
/// (``MemoryTables``), written by the store's own ``Fold`` through the same
/// ``MaterializedState`` as the store's writer. Nothing is written to disk; memory is the
/// size of the materialized state plus the proposals of the log.
///
/// Until issue 8's speed round this was an LMDB environment in a temporary directory
/// (`MDB_NOSYNC`); folding into memory made `replay` and `verify` several times faster
/// (docs/performance.md, W5) and gives the same bytes, since the fold is the same code.
final class ScratchState {
    let tables: MemoryTables
    let state: MaterializedState

    /// Empty tables addressed by the handles of the store being read (`dbs`).
    init(dbs: StoreDatabases) {
        tables = MemoryTables(dbs: dbs)
        state = MaterializedState(dbs: dbs)
        do {
            try tables.put(dbs.meta, key: MetaKey.formatVersion, value: [LogRecord.formatVersion])
        } catch {
            preconditionFailure("an in-memory put without append or noOverwrite cannot fail: \(error)")
        }
    }

    /// Folds `records` as one change set, keeping the bytes of `mutationProposed` records in
    /// the scratch log (the only ones the fold reads back), then records the last LSN in
    /// `meta` as the store's writer does.
    ///
    /// A record the fold refuses (a confirmation whose proposal was unreadable, say) does not
    /// stop the replay: the chunk is undone and folded again with each record on its own
    /// (a nested change set, as the LMDB scratch store did with nested transactions), and
    /// the refused ones are returned as problems.
    func fold(_ records: [(record: LogRecord, bytes: [UInt8])]) throws(StoreError) -> [StoreProblem] {
        guard let last = records.last else { return [] }
        let wholeChunkFailure: any Error
        do {
            return try write(records, last: last.record.lsn, isolated: false)
        } catch {
            wholeChunkFailure = error
        }
        do {
            return try write(records, last: last.record.lsn, isolated: true)
        } catch {
            throw StoreError(error, doing: "folding LSN \(records[0].record.lsn)…\(last.record.lsn) into the scratch state (first: \(wholeChunkFailure))")
        }
    }

    private func write(_ records: [(record: LogRecord, bytes: [UInt8])], last: LSN, isolated: Bool) throws -> [StoreProblem] {
        // SyncMarks decoded once and written once per chunk, as the store's writer does per commit.
        let marks = SyncMarkCache()
        let folding = MaterializedState(dbs: state.dbs, marks: marks)
        let tables = self.tables
        var problems: [StoreProblem] = []
        tables.begin()
        do {
            // Records are read in place from the chunk (not copied out, which retained every
            // field of every record).
            try records.withUnsafeBufferPointer { records in
                for i in records.indices {
                    func apply() throws {
                        // The fold and the pending overlay read back only proposals from the log
                        // (a confirmation or rollback finds its proposal by LSN): the scratch log
                        // keeps those and nothing else.
                        if case .mutationProposed = records[i].record.event {
                            try tables.put(state.dbs.log, key: records[i].record.lsn.keyBytes, value: records[i].bytes, append: true)
                        }
                        try Fold.apply(records[i].record, to: folding, in: tables)
                    }
                    if isolated {
                        let saved = marks.checkpoint()
                        let savepoint = tables.savepoint
                        do {
                            try apply()
                        } catch {
                            tables.rollback(to: savepoint)
                            marks.restore(saved)
                            let record = records[i].record
                            problems.append(StoreProblem(database: "log", collection: record.collection, lsn: record.lsn,
                                                         message: "\(record.kind.name) does not fold: \(StoreError(error, doing: "folding").message)"))
                        }
                    } else {
                        try apply()
                    }
                }
            }
            try marks.flush(into: tables, database: state.dbs.marks)
            try tables.put(state.dbs.meta, key: MetaKey.lastLSN, value: last.keyBytes)
        } catch {
            tables.rollback()
            throw error
        }
        tables.commit()
        return problems
    }
}
