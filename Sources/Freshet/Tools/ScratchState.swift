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

    /// Empty tables addressed by the handles of the store being read (`dbs`), `meta` holding
    /// `formatVersion` (the source store's, so `verify` compares like with like).
    init(dbs: StoreDatabases, formatVersion: UInt8 = StoreFormat.current) {
        tables = MemoryTables(dbs: dbs)
        state = MaterializedState(dbs: dbs)
        do {
            try tables.put(dbs.meta, key: MetaKey.formatVersion, value: [formatVersion])
        } catch {
            preconditionFailure("an in-memory put without append or noOverwrite cannot fail: \(error)")
        }
    }

    /// Folds `chunk` as one change set, keeping the bytes of its `mutationProposed` records in
    /// the scratch log (the only ones the fold reads back), then records the last LSN in
    /// `meta` as the store's writer does. Returns the records that did not fold as problems
    /// (not `chunk.problems`, which the caller reports).
    ///
    /// A record the fold refuses (a confirmation whose proposal was unreadable, say) does not
    /// stop the replay: the chunk is undone and folded again with each record on its own
    /// (a nested change set, as the LMDB scratch store did with nested transactions), and
    /// the refused ones are returned as problems.
    func fold(_ chunk: FoldChunk) throws(StoreError) -> [StoreProblem] {
        guard let last = chunk.records.last else { return [] }
        let wholeChunkFailure: any Error
        do {
            return try write(chunk, last: last.lsn, isolated: false)
        } catch {
            wholeChunkFailure = error
        }
        do {
            return try write(chunk, last: last.lsn, isolated: true)
        } catch {
            throw StoreError(error, doing: "folding LSN \(chunk.records[0].lsn)…\(last.lsn) into the scratch state (first: \(wholeChunkFailure))")
        }
    }

    /// How many records ahead the fold asks the CPU for each stage of a record's lookup
    /// (``MemoryTables/prefetchIndexed(stage:index:rows:hash:)``): the hash slot 12 ahead, the
    /// index entry 6, the linked row 3 (measured: docs/performance.md, "Issue 8 speed round 7
    /// (fold side)"; 8 ahead for the slot alone gave about the same).
    static let distances = (12, 6, 3)

    private func write(_ chunk: FoldChunk, last: LSN, isolated: Bool) throws -> [StoreProblem] {
        // SyncMarks decoded once and written once per chunk, as the store's writer does per commit.
        let marks = SyncMarkCache()
        let folding = MaterializedState(dbs: state.dbs, marks: marks)
        let tables = self.tables
        let log = state.dbs.log
        var problems: [StoreProblem] = []
        var proposal = 0
        tables.begin()
        do {
            // Records are read in place from the chunk (not copied out, which retained every
            // field of every record).
            let index = tables.tableNumber(state.dbs.rowIndex)
            let rowsTable = tables.tableNumber(state.dbs.rows)
            let (d0, d1, d2) = Self.distances
            // Each collection's mark slot, found at its first one-row upsert of the chunk
            // (``Fold/applyLocalUpsert(_:bytes:record:slot:tables:_:state:in:)``).
            var slots = [SyncMarkCache.Slot?](repeating: nil, count: chunk.collectionFirstRecords.count)
            try chunk.records.withUnsafeBufferPointer { records in
              try chunk.upserts.withUnsafeBufferPointer { upserts in
               try chunk.upsertBytes.withUnsafeBytes { bytes in
                let n = records.count
                for i in records.indices {
                    // The lookups of the records ahead, asked of the CPU in stages
                    // (``MemoryTables/prefetchIndexed(stage:index:rows:hash:)``).
                    if i + d0 < n, upserts[i + d0].hash != 0 { tables.prefetchIndexed(stage: 0, index: index, rows: rowsTable, hash: upserts[i + d0].hash) }
                    if i + d1 < n, upserts[i + d1].hash != 0 { tables.prefetchIndexed(stage: 1, index: index, rows: rowsTable, hash: upserts[i + d1].hash) }
                    if i + d2 < n, upserts[i + d2].hash != 0 { tables.prefetchIndexed(stage: 2, index: index, rows: rowsTable, hash: upserts[i + d2].hash) }
                    let record = records.baseAddress.unsafelyUnwrapped + i
                    func apply() throws {
                        // A one-row local write, prepared by the reading thread.
                        if upserts[i].collection >= 0 {
                            try Fold.applyLocalUpsert(upserts[i], bytes: bytes, record: record, slot: &slots[upserts[i].collection],
                                                      tables: index, rowsTable, state: folding, in: tables)
                            return
                        }
                        // The fold and the pending overlay read back only proposals from the log
                        // (a confirmation or rollback finds its proposal by LSN): the scratch log
                        // keeps those and nothing else.
                        // Asked by kind: matching the case copied the record's event (3% of a `replay`).
                        if records[i].kind == .mutationProposed {
                            // Counted before the put, so a record that fails still uses its own bytes.
                            proposal += 1
                            try tables.put(log, key: records[i].lsn.keyBytes, value: chunk.proposals[proposal - 1], append: true)
                        }
                        // Lent in place: passed by value, each record was copied (round 5).
                        try Fold.apply(lent: record, to: folding, in: tables)
                    }
                    if isolated {
                        let saved = marks.checkpoint()
                        let savepoint = tables.savepoint
                        do {
                            try apply()
                        } catch {
                            tables.rollback(to: savepoint)
                            marks.restore(saved)
                            // A slot is valid until the cache is restored.
                            for c in slots.indices { slots[c] = nil }
                            let record = records[i]
                            problems.append(StoreProblem(database: "log", collection: record.collection, lsn: record.lsn,
                                                         message: "\(record.kind.name) does not fold: \(StoreError(error, doing: "folding").message)"))
                        }
                    } else {
                        try apply()
                    }
                }
               }
              }
            }
            try marks.flush(into: tables, marks: state.dbs.marks, meta: state.dbs.meta)
            try tables.put(state.dbs.meta, key: MetaKey.lastLSN, value: last.keyBytes)
        } catch {
            tables.rollback()
            throw error
        }
        tables.commit()
        return problems
    }
}
