import Foundation
import Testing
@testable import Freshet
import FreshetLMDB
import FreshetTesting

/// The stamp journal (`MarkStamps`, meta `markStamps`, store format 2): a local write that
/// changes only a stored mark's LSNs puts them in the journal instead of rewriting the mark in
/// `marks`; every reader sees the mark with the journal's LSNs.
@Suite("The SyncMark stamp journal")
struct MarkStampJournalTests {
    /// The raw `marks` entry of `collection` and the journal, read from the closed store.
    static func raw(_ directory: URL, _ collection: String) throws -> (mark: [UInt8]?, journal: [UInt8]?, version: [UInt8]?) {
        var result: ([UInt8]?, [UInt8]?, [UInt8]?) = (nil, nil, nil)
        try NumberLimitTests.poke(directory) { txn, dbs in
            result = (try txn.get(dbs.marks, key: Array(collection.utf8)),
                      try txn.get(dbs.meta, key: MetaKey.markStamps),
                      try txn.get(dbs.meta, key: MetaKey.formatVersion))
        }
        return result
    }

    static func journal(_ stamps: [(String, UInt64, UInt64)]) -> [UInt8] {
        var journal = MarkStamps()
        for (name, last, rows) in stamps { journal.set(Array(name.utf8), lastLSN: LSN(last), rowsLSN: LSN(rows)) }
        return journal.encoded()
    }

    static func mark(last: UInt64, rows: UInt64) -> SyncMark {
        var mark = SyncMark()
        mark.lastLSN = LSN(last)
        mark.rowsLSN = LSN(rows)
        return mark
    }

    /// Opens a store in `directory`, writes each ID of `ids` to `collection` in a local write
    /// of its own (LSN 1, 2, …), and closes it.
    static func writeEach(_ ids: [String], to collection: String = "notes", in directory: URL) async throws {
        let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
        defer { store.close() }
        for id in ids { try await store.localWrite(collection, [.upsert(row(id))]) }
    }

    @Test("a second local write journals its LSNs and leaves the marks entry as the first wrote it; snapshots, verify, replay and a reopen read the stamped mark")
    func journaled() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            #expect(try await store.localWrite("notes", [.upsert(row("a"))]) == LSN(1))
            #expect(try await store.localWrite("notes", [.upsert(row("b"))]) == LSN(2))
            #expect(try await store.localWrite("notes", [.upsert(row("b"))]) == LSN(3)) // unchanged row: rowsLSN stays 2
            #expect(try store.snapshot("notes").syncMark == Self.mark(last: 3, rows: 2))
            #expect(try store.verify().isOK)
            store.close()

            let raw = try Self.raw(directory, "notes")
            #expect(raw.mark == Self.mark(last: 1, rows: 1).encoded())
            #expect(raw.journal == Self.journal([("notes", 3, 2)]))
            #expect(raw.version == [2])
            #expect(runTool(["verify", directory.path]).status == 0)

            let reopened = try Store(directory: directory, configuration: .test(), dependencies: .test())
            defer { reopened.close() }
            #expect(try reopened.snapshot("notes").syncMark == Self.mark(last: 3, rows: 2))
            #expect(try reopened.snapshot("notes").rows.map(\.id) == ["a", "b"])
        }
    }

    @Test("a change other than a stamp (an invalidation) writes the mark whole with its LSNs and empties the journal")
    func wholeWriteDropsStamp() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            try await store.localWrite("notes", [.upsert(row("a"))])
            try await store.localWrite("notes", [.upsert(row("b"))])
            #expect(try await store.invalidate("notes") == LSN(3))
            let expected = try #require(try store.snapshot("notes").syncMark)
            #expect(expected.lastLSN == LSN(3) && expected.rowsLSN == LSN(2) && expected.invalidatedLSN == LSN(3))
            #expect(try store.verify().isOK)
            store.close()
            let raw = try Self.raw(directory, "notes")
            #expect(raw.mark == expected.encoded())
            #expect(raw.journal == nil)
        }
    }

    @Test("an evicted collection loses its mark and its stamp; a fetch after local writes writes the mark whole")
    func evictionAndFetchDropStamps() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            #expect(try await store.append(ClockChangeTests.fetched(["1"]), to: "items") == LSN(1))
            try await store.localWrite("items", [.upsert(row("2"))])
            try await store.localWrite("notes", [.upsert(row("a"))])
            try await store.localWrite("notes", [.upsert(row("b"))])
            try await store.localWrite("items", [.upsert(row("3"))])                        // LSN 5: items journaled
            #expect(try await store.append(GarbageCollectionTests.evicted300, to: "items") == LSN(6))
            #expect(try await store.append(ClockChangeTests.fetched(["x"]), to: "notes") == LSN(7))
            #expect(try store.snapshot("items").syncMark == nil)
            let notes = try #require(try store.snapshot("notes").syncMark)
            #expect(notes.lastLSN == LSN(7) && notes.rowsLSN == LSN(7) && notes.fetchedLSN == LSN(7))
            #expect(try store.verify().isOK)
            store.close()
            #expect(try Self.raw(directory, "items").mark == nil)
            let raw = try Self.raw(directory, "notes")
            #expect(raw.mark == notes.encoded())
            #expect(raw.journal == nil)
        }
    }

    @Test("the journal holds at most 16 collections: the 17th empties it into marks, each mark with its stamped LSNs")
    func overfullJournalEmptied() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            let names = (0..<17).map { String(format: "c%02d", $0) }
            for name in names { try await store.localWrite(name, [.upsert(row("a"))]) }   // LSN 1 ... 17: marks written whole
            for name in names.prefix(16) { try await store.localWrite(name, [.upsert(row("b"))]) } // LSN 18 ... 33: journaled
            store.close()
            var raw = try Self.raw(directory, "c15")
            #expect(raw.mark == Self.mark(last: 16, rows: 16).encoded())
            #expect(raw.journal == Self.journal(names.prefix(16).enumerated().map { ($0.element, UInt64(18 + $0.offset), UInt64(18 + $0.offset)) }))

            let reopened = try Store(directory: directory, configuration: .test(), dependencies: .test())
            #expect(try await reopened.localWrite("c16", [.upsert(row("b"))]) == LSN(34))
            for (i, name) in names.enumerated() {
                #expect(try reopened.snapshot(name).syncMark == Self.mark(last: UInt64(18 + i), rows: UInt64(18 + i)))
            }
            #expect(try reopened.verify().isOK)
            reopened.close()
            raw = try Self.raw(directory, "c15")
            #expect(raw.mark == Self.mark(last: 33, rows: 33).encoded())
            #expect(raw.journal == nil)
        }
    }

    @Test("a format 1 store is read as it is when opened read-only (and verifies), and becomes format 2 when opened for writing")
    func formatOneUpgraded() async throws {
        try await withTemporaryDirectory { directory in
            try await Self.writeEach(["a"], in: directory)
            try NumberLimitTests.poke(directory) { txn, dbs in try txn.put(dbs.meta, key: MetaKey.formatVersion, value: [1]) }

            let readOnly = try Store(directory: directory, configuration: .test(), dependencies: .test(), create: false)
            #expect(readOnly.formatVersion == 1)
            #expect(try readOnly.verify().isOK)
            readOnly.close()
            #expect(try Self.raw(directory, "notes").version == [1])

            let writable = try Store(directory: directory, configuration: .test(), dependencies: .test())
            #expect(writable.formatVersion == 2)
            writable.close()
            #expect(try Self.raw(directory, "notes").version == [2])
        }
    }

    @Test("a damaged journal: a writable open is corrupted (nothing written), read-only snapshots are corruptRecord, verify reports it (exit 1) and compares marks as stored, compact refuses (exit 2)")
    func damagedJournal() async throws {
        try await withTemporaryDirectory { directory in
            try await Self.writeEach(["a", "b"], in: directory)
            try NumberLimitTests.poke(directory) { txn, dbs in try txn.put(dbs.meta, key: MetaKey.markStamps, value: [0, 5, 0x6E]) }
            let bytes = try Data(contentsOf: directory.appendingPathComponent("data.mdb"))
            let journalError = "the SyncMark stamp journal (meta \"markStamps\"): an entry is truncated"

            let writable = #expect(throws: StoreError.self) { try Store(directory: directory, configuration: .test(), dependencies: .test()) }
            #expect(writable?.code == .corrupted)
            #expect(writable?.message == "\(directory.path) is damaged (\(journalError)); nothing was written. Its log is intact: `freshet export` it and `freshet import` the export into a new directory to rebuild it without loss (docs/reliability.md, \"A damaged stamp journal\")")
            #expect(try Data(contentsOf: directory.appendingPathComponent("data.mdb")) == bytes)

            let readOnly = try Store(directory: directory, configuration: .test(), dependencies: .test(), create: false)
            let read = #expect(throws: StoreError.self) { try readOnly.snapshot("notes") }
            #expect(read?.code == .corruptRecord)
            #expect(read?.message.hasSuffix(journalError) == true, "\(read?.message ?? "")")
            // The stored mark (lastLSN 1) is compared as it is: it differs from the replay's (2).
            #expect(try readOnly.verify().problems.map(\.description) == [
                "meta: \(journalError); every SyncMark is compared as `marks` stores it",
                "marks · notes · LSN 2: stored value differs from the replay",
            ])
            readOnly.close()
            let verify = runTool(["verify", directory.path])
            #expect(verify.status == 1)
            let compact = runTool(["compact", directory.path, "--keep", "0s"])
            #expect(compact.status == 2)
            #expect(try Data(contentsOf: directory.appendingPathComponent("data.mdb")) == bytes)
            // As the message says: export and import rebuild it, every mark as the log gives it.
            let export = directory.deletingLastPathComponent().appendingPathComponent(directory.lastPathComponent + "-export.jsonl")
            let rebuilt = directory.deletingLastPathComponent().appendingPathComponent(directory.lastPathComponent + "-rebuilt")
            defer {
                try? FileManager.default.removeItem(at: export)
                try? FileManager.default.removeItem(at: rebuilt)
            }
            let exported = runTool(["export", directory.path])
            #expect(exported.status == 0)
            try Data((exported.stdout.joined(separator: "\n") + "\n").utf8).write(to: export)
            #expect(runTool(["import", rebuilt.path, export.path]).status == 0)
            let fixed = try Store(directory: rebuilt, configuration: .test(), dependencies: .test())
            defer { fixed.close() }
            #expect(try fixed.snapshot("notes").syncMark == Self.mark(last: 2, rows: 2))
            #expect(try fixed.verify().isOK)
        }
    }

    @Test("a stamp readers ignore (no mark, or not newer than its mark) leaves every mark as stored and is reported by verify; a read-write open drops it")
    func ignoredStamps() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            let names = (0..<16).map { String(format: "s%02d", $0) }
            for name in names { try await store.localWrite(name, [.upsert(row("a"))]) }   // LSN 1 ... 16: marks written whole
            store.close()
            // "zzz" has no mark; s00's stamp (LSN 1) is not newer than its mark (lastLSN 1).
            try NumberLimitTests.poke(directory) { txn, dbs in
                try txn.put(dbs.meta, key: MetaKey.markStamps, value: Self.journal([("s00", 1, 0), ("zzz", 5, 5)]))
            }
            let readOnly = try Store(directory: directory, configuration: .test(), dependencies: .test(), create: false)
            #expect(try readOnly.snapshot("s00").syncMark == Self.mark(last: 1, rows: 1))
            #expect(try readOnly.snapshot("zzz").syncMark == nil)
            #expect(try readOnly.verify().problems.map(\.description) == [
                "meta · s00 · LSN 1: the stamp journal (markStamps) has lastLSN 1, not newer than the SyncMark's 1; readers ignore the stamp",
                "meta · zzz · LSN 5: the stamp journal (markStamps) stamps a collection with no SyncMark; readers ignore the stamp",
            ])
            readOnly.close()
            #expect(runTool(["verify", directory.path]).status == 1)

            let reopened = try Store(directory: directory, configuration: .test(), dependencies: .test())
            #expect(try reopened.verify().isOK)
            for name in names { try await reopened.localWrite(name, [.upsert(row("b"))]) }  // LSN 17 ... 32: journaled
            for (i, name) in names.enumerated() {
                #expect(try reopened.snapshot(name).syncMark == Self.mark(last: UInt64(17 + i), rows: UInt64(17 + i)))
            }
            #expect(try reopened.verify().isOK)
            reopened.close()
            #expect(try Self.raw(directory, "s00").journal == Self.journal(names.enumerated().map { ($0.element, UInt64(17 + $0.offset), UInt64(17 + $0.offset)) }))
            #expect(try Self.raw(directory, "zzz").mark == nil)
        }
    }

    @Test("a journal over its limits is read and reported by verify")
    func overfullJournalRead() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            let names = (0..<17).map { String(format: "c%02d", $0) }
            for name in names { try await store.localWrite(name, [.upsert(row("a"))]) }   // LSN 1 ... 17
            store.close()
            try NumberLimitTests.poke(directory) { txn, dbs in
                try txn.put(dbs.meta, key: MetaKey.markStamps, value: Self.journal(names.enumerated().map { ($0.element, UInt64(20 + $0.offset), UInt64($0.offset + 1)) }))
            }
            let readOnly = try Store(directory: directory, configuration: .test(), dependencies: .test(), create: false)
            defer { readOnly.close() }
            #expect(try readOnly.snapshot("c16").syncMark == Self.mark(last: 36, rows: 17))
            // 17 entries of 2 + 3 + 16 bytes; the stamps' LSNs are none the log gives, so every
            // mark differs from the replay as well.
            let problems = try readOnly.verify().problems
            #expect(problems.filter { $0.database == "meta" }.map(\.description) == [
                "meta: the stamp journal (markStamps) holds 17 entries (357 bytes), over its limits of 16 entries and 1024 bytes",
            ])
            #expect(problems.filter { $0.database == "marks" }.compactMap(\.collection) == names)
        }
    }

    @Test("a format 1 store another process has open stays format 1 and is written without the journal; opened alone later, it becomes format 2")
    func formatOneSharedNotUpgraded() async throws {
        try await withTemporaryDirectory { directory in
            try await Self.writeEach(["a"], in: directory)
            try NumberLimitTests.poke(directory) { txn, dbs in try txn.put(dbs.meta, key: MetaKey.formatVersion, value: [1]) }
            let reader = try await StoreHelper(["read", directory.path])
            #expect(try await reader.nextLine() == "reading")

            let shared = try Store(directory: directory, configuration: .test(), dependencies: .test())
            #expect(shared.formatVersion == 1)
            try await shared.localWrite("notes", [.upsert(row("b"))])
            try await shared.localWrite("notes", [.upsert(row("c"))])
            shared.close()
            var raw = try Self.raw(directory, "notes")
            #expect(raw.version == [1])
            #expect(raw.journal == nil)
            #expect(raw.mark == Self.mark(last: 3, rows: 3).encoded())

            _ = await reader.kill()
            let alone = try Store(directory: directory, configuration: .test(), dependencies: .test())
            #expect(alone.formatVersion == 2)
            try await alone.localWrite("notes", [.upsert(row("d"))])
            #expect(try alone.verify().isOK)
            alone.close()
            raw = try Self.raw(directory, "notes")
            #expect(raw.version == [2])
            #expect(raw.journal == Self.journal([("notes", 4, 4)]))
        }
    }

    @Test("a mark written whole after the stamp (a format 1 Freshet writing the store) supersedes it: LSNs only grow; a read-write open drops the stamp")
    func wholeMarkSupersedesStamp() async throws {
        try await withTemporaryDirectory { directory in
            try await Self.writeEach(["a", "b", "c"], in: directory)     // LSN 2 and 3 journaled: 3 / 3
            // What a format 1 writer leaves after folding LSN 3 itself: the mark written whole,
            // the journal not read (here, a journal from before its write: 2 / 2).
            try NumberLimitTests.poke(directory) { txn, dbs in
                try txn.put(dbs.marks, key: Array("notes".utf8), value: Self.mark(last: 3, rows: 3).encoded())
                try txn.put(dbs.meta, key: MetaKey.markStamps, value: Self.journal([("notes", 2, 2)]))
            }
            let readOnly = try Store(directory: directory, configuration: .test(), dependencies: .test(), create: false)
            #expect(try readOnly.snapshot("notes").syncMark == Self.mark(last: 3, rows: 3))
            #expect(try readOnly.verify().problems.map(\.description) == [
                "meta · notes · LSN 2: the stamp journal (markStamps) has lastLSN 2, not newer than the SyncMark's 3; readers ignore the stamp",
            ])
            readOnly.close()
            let reopened = try Store(directory: directory, configuration: .test(), dependencies: .test())
            defer { reopened.close() }
            #expect(try reopened.verify().isOK)
            #expect(try await reopened.localWrite("notes", [.upsert(row("d"))]) == LSN(4))
            #expect(try reopened.snapshot("notes").syncMark == Self.mark(last: 4, rows: 4))
            #expect(try reopened.verify().isOK)
        }
    }

    @Test("a stale stamp (LSNs the log does not give) makes verify report the marks entry of that collection, naming the journal")
    func staleStampReported() async throws {
        try await withTemporaryDirectory { directory in
            try await Self.writeEach(["a", "b"], in: directory)
            try NumberLimitTests.poke(directory) { txn, dbs in
                try txn.put(dbs.meta, key: MetaKey.markStamps, value: Self.journal([("notes", 2, 1)]))
            }
            let reopened = try Store(directory: directory, configuration: .test(), dependencies: .test())
            defer { reopened.close() }
            #expect(try reopened.verify().problems.map(\.description) == [
                "marks · notes · LSN 2: stored value differs from the replay (lastLSN and rowsLSN as the stamp journal, meta \"markStamps\", gives them)",
            ])
        }
    }

    @Test("a store format version that is not one byte is unsupportedFormat and says so")
    func twoByteVersion() async throws {
        try await withTemporaryDirectory { directory in
            try await Self.writeEach(["a"], in: directory)
            try NumberLimitTests.poke(directory) { txn, dbs in try txn.put(dbs.meta, key: MetaKey.formatVersion, value: [1, 2]) }
            let error = #expect(throws: StoreError.self) { try Store(directory: directory, configuration: .test(), dependencies: .test()) }
            #expect(error?.code == .unsupportedFormat)
            #expect(error?.message == "\(directory.path) has a store format version of 2 bytes (01 02), where one byte is expected; this Freshet reads formats 1 to 2")
        }
    }

    @Test("the stored form: names in byte order, each length, name, lastLSN and rowsLSN; truncated or unordered bytes are refused")
    func storedForm() throws {
        var stamps = MarkStamps()
        stamps.set(Array("b".utf8), lastLSN: 7, rowsLSN: 5)
        stamps.set(Array("a".utf8), lastLSN: 3, rowsLSN: 3)
        stamps.set(Array("b".utf8), lastLSN: 8, rowsLSN: 5)
        let bytes = stamps.encoded()
        #expect(bytes == [0, 1, 0x61, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 3,
                          0, 1, 0x62, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 5])
        #expect(stamps.byteCount == bytes.count)
        #expect(try bytes.withUnsafeBytes { try MarkStamps(decoding: $0) } == stamps)
        let removed = stamps.remove(Array("a".utf8))
        let again = stamps.remove(Array("a".utf8))
        #expect(removed && !again)
        #expect(stamps.stamp(for: Array("b".utf8))?.lastLSN == LSN(8))

        let swapped = Array(bytes[19...]) + Array(bytes[..<19])
        let unordered = #expect(throws: StoreError.self) { try swapped.withUnsafeBytes { try MarkStamps(decoding: $0) } }
        #expect(unordered?.message == "the SyncMark stamp journal (meta \"markStamps\"): names are not in ascending order")
        for cut in [1, 2, 3, 18] {
            let truncated = #expect(throws: StoreError.self) { try Array(bytes.prefix(cut)).withUnsafeBytes { try MarkStamps(decoding: $0) } }
            #expect(truncated?.code == .corruptRecord)
        }
        var full = MarkStamps()
        for i in 0..<16 { full.set(Array("c\(i)".utf8), lastLSN: 1, rowsLSN: 1) }
        #expect(!full.isOverfull)
        full.set(Array("c16".utf8), lastLSN: 1, rowsLSN: 1)
        #expect(full.isOverfull)
        var long = MarkStamps()
        for i in 0..<5 { long.set(Array((String(i) + String(repeating: "x", count: 199)).utf8), lastLSN: 1, rowsLSN: 1) }
        #expect(long.byteCount == 5 * 218)
        #expect(long.isOverfull)
    }
}
