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
            try reference.put(dbs.meta, key: MetaKey.formatVersion, value: [StoreFormat.current])
            let marks = SyncMarkCache()
            let state = MaterializedState(dbs: dbs, marks: marks)
            for record in records { try Fold.apply(record, to: state, in: reference) }
            try marks.flush(into: reference, marks: dbs.marks, meta: dbs.meta)
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

    @Test("a chunk of records decoded with prepared rows left out: the same upserts and bytes, and folded, the same tables")
    func leftOutRows() throws {
        try withScratchStore { store in
            let dbs = store.state.dbs
            let records = Self.records() + Self.moreRecords()
            var full = FoldChunk(capacity: 32)
            var leftOut = FoldChunk(capacity: 32)
            var rows = RowJSONBlocks.shared()
            var names: CollectionNames? = CollectionNames()
            var emptied: [Int] = []
            for (i, record) in records.enumerated() {
                try record.encoded().withUnsafeBytes { raw in
                    var ops: [Event.RowChanges.Op] = []
                    var layout: RowChangesLayout?
                    let decoded = try LogRecord.decode(raw, expectedLSN: record.lsn, rows: &rows, ops: &ops, layout: &layout, names: &names, leavesOutPreparedRow: true)
                    #expect(decoded.lsn == record.lsn && decoded.kind == record.kind && decoded.collection == record.collection && decoded.timestamp == record.timestamp)
                    if layout?.isPreparedUpsert == true {
                        #expect(decoded.event == (record.kind == .changed ? .changed(.init([])) : .localWrite(.init([]))), "LSN \(record.lsn)")
                        emptied.append(i)
                    } else {
                        #expect(decoded == record, "LSN \(record.lsn)")
                    }
                    leftOut.append(decoded, bytes: raw, layout: layout)
                    full.append(record, bytes: raw)
                }
            }
            // Exactly the records folded from prepared bytes (collection number 0 or more) were emptied.
            #expect(emptied == [0, 1, 2, 3, 4, 5, 11, 12, 13, 14, 15, 17])
            #expect(leftOut.upserts.indices.filter { leftOut.upserts[$0].collection >= 0 } == emptied)
            #expect(leftOut.upserts == full.upserts)
            #expect(Array(leftOut.upsertBytes) == Array(full.upsertBytes))

            let folded = ScratchState(dbs: dbs)
            #expect(try folded.fold(leftOut).isEmpty)
            let reference = ScratchState(dbs: dbs)
            #expect(try reference.fold(full).isEmpty)
            for db in [dbs.log, dbs.rows, dbs.rowIndex, dbs.marks, dbs.meta, dbs.pending, dbs.mutations, dbs.idMap, dbs.confirmed] {
                let got = folded.tables.entries(db)
                let want = reference.tables.entries(db)
                #expect(got.map(\.key) == want.map(\.key), "\(db.name)")
                #expect(got.map(\.value) == want.map(\.value), "\(db.name)")
            }
            #expect(folded.tables.count(dbs.rowIndex) == 8)
        }
    }

    /// Round 8's cases beside ``records()``: an ID of multi-byte UTF-8, an ID of 200 bytes (its
    /// length a 2-byte varint), a row at exactly the size limit, an empty ID and JSON, a two-op
    /// write whose first op is a delete, collections alternating.
    static func moreRecords() -> [LogRecord] {
        let t = Date(timeIntervalSince1970: 1_700_000_100)
        let events: [(String, Event)] = [
            ("pokémon", .localWrite(.init([.upsert(row("ピカチュウ-é", #"{"n":"é"}"#))]))),
            ("a", .localWrite(.init([.upsert(row(String(repeating: "i", count: 200), #"{"n":1}"#))]))),
            ("pokémon", .localWrite(.init([.upsert(row("1", String(repeating: "x", count: FoldChunk.preparedRowLimit)))]))),
            ("b", .localWrite(.init([.upsert(row("", ""))]))),
            ("a", .localWrite(.init([.delete(id: "2"), .upsert(row("3", "{}"))]))),
            ("b", .changed(.init([.upsert(row("1", #"{"n":5}"#))]))),
        ]
        return events.enumerated().map { i, e in LogRecord(lsn: LSN(UInt64(i + 100)), timestamp: t, collection: e.0, event: e.1) }
    }

    @Test("prepared from where the decoder found the first op: the same upserts and bytes as from the event, a chunk emptied and refilled")
    func fromLayout() throws {
        var fromEvents = FoldChunk(capacity: 16)
        var fromLayouts = FoldChunk(capacity: 16)
        for round in 0..<2 {
            for record in Self.records() + Self.moreRecords() {
                let bytes = record.encoded()
                try bytes.withUnsafeBytes { raw in
                    var rows = RowJSONBlocks.shared()
                    var ops: [Event.RowChanges.Op] = []
                    var layout: RowChangesLayout?
                    var names: CollectionNames?
                    let decoded = try LogRecord.decode(raw, expectedLSN: record.lsn, rows: &rows, ops: &ops, layout: &layout, names: &names)
                    #expect(decoded == record)
                    #expect((layout != nil) == (record.kind == .localWrite || record.kind == .changed), "LSN \(record.lsn)")
                    fromLayouts.append(decoded, bytes: raw, layout: layout)
                    fromEvents.append(record, bytes: raw)
                }
            }
            #expect(fromLayouts.upserts == fromEvents.upserts, "round \(round)")
            #expect(Array(fromLayouts.upsertBytes) == Array(fromEvents.upsertBytes), "round \(round)")
            #expect(fromLayouts.collectionFirstRecords == fromEvents.collectionFirstRecords, "round \(round)")
            #expect(fromLayouts.upserts.map(\.collection) == [0, 1, 0, 0, 0, 0, -1, -1, -1, -1, -1, 1, 2, 0, 2, 1, -1, 1], "round \(round)")
            #expect(fromLayouts.collectionFirstRecords == [0, 1, 12], "round \(round)")
            // The 200-byte ID: its row starts with its length in two varint bytes (200 = 0xC8 0x01).
            let long = fromLayouts.upserts[13]
            let rowStart = long.start + long.keyCount
            #expect(Array(fromLayouts.upsertBytes[long.start..<rowStart]) == Keys.index(Keys.collection("a"), id: String(repeating: "i", count: 200)))
            #expect(Array(fromLayouts.upsertBytes[rowStart..<(rowStart + long.rowCount)])
                == MaterializedState.encodeRow(Self.row(String(repeating: "i", count: 200), #"{"n":1}"#)))
            #expect(Array(fromLayouts.upsertBytes[rowStart..<(rowStart + 2)]) == [0xC8, 0x01])
            // The multi-byte ID's key and row, and the row at the limit's length.
            let utf8 = fromLayouts.upserts[12]
            #expect(Array(fromLayouts.upsertBytes[utf8.start..<(utf8.start + utf8.keyCount)]) == Keys.index(Keys.collection("pokémon"), id: "ピカチュウ-é"))
            #expect(utf8.prefixCount == 2 + "pokémon".utf8.count)
            #expect(fromLayouts.upserts[14].rowCount == 1 + 1 + FoldChunk.preparedRowLimit)
            // The empty ID and JSON: key is the prefix alone, row the varint 0.
            #expect(fromLayouts.upserts[15].keyCount == 3 && fromLayouts.upserts[15].rowCount == 1)
            // The delete first: only its key's hash.
            #expect(fromLayouts.upserts[16] == FoldChunk.Upsert(hash: Keys.index(Keys.collection("a"), id: "2").withUnsafeBytes { ByteHashIndex.hash($0) }))
            fromEvents.removeAll()
            fromLayouts.removeAll()
            #expect(fromLayouts.upsertBytes.isEmpty && fromLayouts.collectionFirstRecords.isEmpty)
        }
    }
}
