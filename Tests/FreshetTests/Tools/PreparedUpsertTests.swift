import Foundation
@testable import Freshet
import FreshetLMDB
import Testing

/// The log tools fold a one-row local write from what the reading thread prepared
/// (`FoldChunk.Upsert`, `Fold.applyLocalUpsert`); every table must come out byte for byte as
/// the general fold (`Fold.apply`) leaves it.
@Suite("Prepared one-row upserts fold as the general path does")
struct PreparedUpsertTests {
    static func row(_ id: String, _ json: String) -> Row { Row(id: id, json: Data(json.utf8)) }

    static func records() -> [LogRecord] {
        let t = Date(timeIntervalSince1970: 1_700_000_000)
        let events: [(String, Event)] = [
            ("a", .localWrite(.init([.upsert(row("1", #"{"n":1}"#))]))),                  // new collection, new row
            ("b", .localWrite(.init([.upsert(row("1", #"{"n":1}"#))]))),                  // another collection
            ("a", .localWrite(.init([.upsert(row("1", #"{"n":1}"#))]))),                  // identical: nothing changes
            ("a", .localWrite(.init([.upsert(row("1", #"{"n":2}"#))]))),                  // same length, changed
            ("a", .changed(.init([.upsert(row("1", #"{"n":22}"#))]))),                    // longer, no origin
            ("a", .localWrite(.init([.upsert(row("2", #"{"n":3}"#))]))),                  // appended after row 1
            ("a", .localWrite(.init([.upsert(row("3", "{}")), .delete(id: "1")]))),       // two ops: general path
            ("b", .localWrite(.init([.delete(id: "1")]))),                                // a delete: general path
            ("b", .changed(.init([.upsert(row("9", "[]"))], origin: PushOrigin(source: "sse", eventID: "7")))), // pushed: general
            ("a", .invalidated(.init(reason: "pulled"))),
            ("a", .localWrite(.init([.upsert(row("1", String(repeating: "x", count: FoldChunk.preparedRowLimit + 1)))]))), // too large: general
            ("b", .localWrite(.init([.upsert(row("1", #"{"n":1}"#))]))),                  // row 1 of b again after its delete
        ]
        return events.enumerated().map { i, e in LogRecord(lsn: LSN(UInt64(i + 1)), timestamp: t, collection: e.0, event: e.1) }
    }

    @Test("each record's preparation: collection numbers for one-row upserts only, a lookup hash for every row change")
    func prepared() {
        var chunk = FoldChunk(capacity: 16)
        for record in Self.records() { record.encoded().withUnsafeBytes { chunk.append(record, bytes: $0) } }
        #expect(chunk.upserts.map(\.collection) == [0, 1, 0, 0, 0, 0, -1, -1, -1, -1, -1, 1])
        #expect(chunk.upserts.map { $0.hash != 0 } == [true, true, true, true, true, true, true, true, true, false, true, true])
        #expect(chunk.collectionFirstRecords == [0, 1])
        let first = chunk.upserts[0]
        #expect(Array(chunk.upsertBytes[first.start..<(first.start + first.keyCount)]) == Keys.index(Keys.collection("a"), id: "1"))
        #expect(first.prefixCount == 3)
        let row = first.start + first.keyCount
        #expect(Array(chunk.upsertBytes[row..<(row + first.rowCount)]) == MaterializedState.encodeRow(Self.row("1", #"{"n":1}"#)))
        chunk.removeAll()
        #expect(chunk.upserts.isEmpty && chunk.upsertBytes.isEmpty && chunk.collectionFirstRecords.isEmpty)
    }

    @Test("a chunk folded by ScratchState (prepared upserts) leaves every table as Fold.apply record by record does")
    func sameTables() throws {
        try withScratchStore { store in
            let dbs = store.state.dbs
            let records = Self.records()
            var chunk = FoldChunk(capacity: 16)
            for record in records { record.encoded().withUnsafeBytes { chunk.append(record, bytes: $0) } }
            let scratch = ScratchState(dbs: dbs)
            #expect(try scratch.fold(chunk).isEmpty)

            let reference = MemoryTables(dbs: dbs)
            try reference.put(dbs.meta, key: MetaKey.formatVersion, value: [LogRecord.formatVersion])
            let marks = SyncMarkCache()
            let state = MaterializedState(dbs: dbs, marks: marks)
            for record in records { try Fold.apply(record, to: state, in: reference) }
            try marks.flush(into: reference, database: dbs.marks)
            try reference.put(dbs.meta, key: MetaKey.lastLSN, value: records[records.count - 1].lsn.keyBytes)

            for db in [dbs.log, dbs.rows, dbs.rowIndex, dbs.marks, dbs.meta, dbs.pending, dbs.mutations, dbs.idMap, dbs.confirmed] {
                let got = scratch.tables.entries(db)
                let want = reference.entries(db)
                #expect(got.map(\.key) == want.map(\.key), "\(db.name)")
                #expect(got.map(\.value) == want.map(\.value), "\(db.name)")
            }
            // Rows a: 1 (deleted by LSN 7, re-added by LSN 11), 2, 3; b: 9 (pushed), 1 (re-added by LSN 12).
            #expect(scratch.tables.count(dbs.rowIndex) == 5)
        }
    }
}
