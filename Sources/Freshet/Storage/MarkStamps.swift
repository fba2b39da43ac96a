import FreshetLMDB

/// The stamp journal: the newest `lastLSN` and `rowsLSN` of collections whose SyncMark only a
/// local write changed since it was last written, kept in `meta` under ``MetaKey/markStamps``
/// instead of rewriting the mark in `marks` (docs/log-format.md §9.1).
///
/// Why: every commit already writes `meta` (``MetaKey/lastLSN``), one leaf page, while a
/// mark rewritten in `marks` copies that B-tree's path, which gains a level once the marks
/// outgrow one leaf (a few dozen collections): at 5,000 collections a local write copied one
/// page more than at 10 (docs/performance.md, "W7 round 5").
///
/// A collection's mark is its `marks` entry with these two LSNs in place of the stored ones,
/// when the journal names it with a `lastLSN` newer than the entry's (``applied(to:name:)``).
/// The writer journals only collections that have a `marks` entry, and any other change of
/// the mark writes it whole and drops it from the journal; a stamp that is not newer than its
/// mark, or names no mark, is ignored: a mark written whole later (say by a Freshet of store
/// format 1 that had the store open when it was upgraded) supersedes it, as LSNs only grow.
///
/// Stored form: entries in ascending byte order of their names, each the name's UTF-8 length
/// (2 bytes big-endian), the name, `lastLSN` and `rowsLSN` (8 bytes big-endian each). At most
/// ``maxEntries`` entries and ``maxBytes`` bytes: the value stays far below LMDB's limit for
/// a value kept inside a 4,096-byte page (larger values go to overflow pages, written whole
/// at every change), and re-encoding it costs each commit little.
struct MarkStamps: Equatable, Sendable {
    struct Stamp: Equatable, Sendable {
        var name: [UInt8]
        var lastLSN: LSN
        var rowsLSN: LSN
    }

    static let maxEntries = 16
    static let maxBytes = 1_024

    /// Ascending by name bytes.
    private(set) var stamps: [Stamp] = []

    init() {}

    /// Decodes the stored form.
    /// - Throws: ``StoreError/Code/corruptRecord`` when the bytes are not the stored form
    ///   (a truncated entry, names out of order).
    init(decoding bytes: UnsafeRawBufferPointer) throws(StoreError) {
        var offset = 0
        while offset < bytes.count {
            guard bytes.count - offset >= 2 else { throw Self.corrupt("an entry is truncated") }
            let n = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            guard n > 0 else { throw Self.corrupt("an entry has an empty name") }
            guard n <= Keys.maxCollectionBytes else { throw Self.corrupt("an entry's name is \(n) bytes, more than \(Keys.maxCollectionBytes)") }
            guard bytes.count - offset - 2 >= n + 16 else { throw Self.corrupt("an entry is truncated") }
            let name = Array(bytes[(offset + 2)..<(offset + 2 + n)])
            let last = Keys.readUInt64(bytes, at: offset + 2 + n)
            let rows = Keys.readUInt64(bytes, at: offset + 10 + n)
            if let previous = stamps.last, OrderedTable.compare(previous.name, name) >= 0 {
                throw Self.corrupt("names are not in ascending order")
            }
            stamps.append(Stamp(name: name, lastLSN: LSN(last), rowsLSN: LSN(rows)))
            offset += 2 + n + 16
        }
    }

    /// Reads the journal of `meta` (empty when there is none).
    static func read(_ meta: Database, in txn: borrowing some FoldTables & ~Copyable) throws -> MarkStamps {
        try txn.withValue(meta, key: MetaKey.markStamps) { bytes in try MarkStamps(decoding: bytes) } ?? MarkStamps()
    }

    var isEmpty: Bool { stamps.isEmpty }
    var count: Int { stamps.count }

    /// The stored form's size in bytes.
    var byteCount: Int { stamps.reduce(0) { $0 + 18 + $1.name.count } }

    /// Whether the journal is over ``maxEntries`` or ``maxBytes``.
    var isOverfull: Bool { count > Self.maxEntries || byteCount > Self.maxBytes }

    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount)
        for s in stamps {
            bytes.append(UInt8(truncatingIfNeeded: s.name.count >> 8))
            bytes.append(UInt8(truncatingIfNeeded: s.name.count))
            bytes.append(contentsOf: s.name)
            withUnsafeBytes(of: s.lastLSN.rawValue.bigEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: s.rowsLSN.rawValue.bigEndian) { bytes.append(contentsOf: $0) }
        }
        return bytes
    }

    private func search(_ name: [UInt8]) -> (found: Bool, index: Int) {
        var low = 0, high = stamps.count
        while low < high {
            let mid = (low + high) / 2
            let c = OrderedTable.compare(stamps[mid].name, name)
            if c == 0 { return (true, mid) }
            if c < 0 { low = mid + 1 } else { high = mid }
        }
        return (false, low)
    }

    /// The stamp of the collection named `name` (UTF-8), if the journal holds one.
    func stamp(for name: [UInt8]) -> Stamp? {
        guard !stamps.isEmpty else { return nil }
        let (found, i) = search(name)
        return found ? stamps[i] : nil
    }

    /// Whether the journal's stamp for `name` applies to a mark whose stored `lastLSN` is
    /// `stored`: it is newer. Else it is a leftover the mark superseded, and is ignored.
    func applies(_ s: Stamp, over stored: LSN) -> Bool { s.lastLSN > stored }

    /// `mark` with the journal's LSNs for `name` in place of its own, when the journal has a
    /// stamp for it that is newer than the mark (``applies(_:over:)``).
    func applied(to mark: SyncMark, name: [UInt8]) -> SyncMark {
        guard let s = stamp(for: name), applies(s, over: mark.lastLSN) else { return mark }
        var m = mark
        m.lastLSN = s.lastLSN
        m.rowsLSN = s.rowsLSN
        return m
    }

    /// Records the LSNs for `name`, replacing its stamp if it has one.
    mutating func set(_ name: [UInt8], lastLSN: LSN, rowsLSN: LSN) {
        let (found, i) = search(name)
        let s = Stamp(name: name, lastLSN: lastLSN, rowsLSN: rowsLSN)
        if found { stamps[i] = s } else { stamps.insert(s, at: i) }
    }

    /// Why readers ignore a stamp (``applies(_:over:)``).
    enum Ignored: Equatable {
        /// `marks` has no entry for the stamp's collection.
        case noMark
        /// The stamp's `lastLSN` is not newer than the `marks` entry's, this one.
        case notNewer(than: LSN)
    }

    /// The stamps readers ignore, in the journal's order, with why: those naming a collection
    /// `marks` (in `txn`) has no entry for, or not newer than its entry's `lastLSN`. A mark
    /// that does not decode keeps its stamp (its own damage is reported elsewhere).
    func ignored(marks: Database, in txn: borrowing some FoldTables & ~Copyable) throws -> [(stamp: Stamp, why: Ignored)] {
        var found: [(stamp: Stamp, why: Ignored)] = []
        for s in stamps {
            guard let bytes = try txn.get(marks, key: s.name) else {
                found.append((s, .noMark))
                continue
            }
            let stored: LSN?
            do {
                stored = try SyncMark.decode(bytes).lastLSN
            } catch {
                stored = nil
            }
            if let stored, !applies(s, over: stored) { found.append((s, .notNewer(than: stored))) }
        }
        return found
    }

    /// The journal without the stamps readers ignore (``ignored(marks:in:)``).
    func withoutIgnored(marks: Database, in txn: borrowing some FoldTables & ~Copyable) throws -> MarkStamps {
        let dropped = Set(try ignored(marks: marks, in: txn).map(\.stamp.name))
        var kept = MarkStamps()
        kept.stamps = stamps.filter { !dropped.contains($0.name) }
        return kept
    }

    /// Drops the stamp of `name`; returns whether there was one.
    @discardableResult
    mutating func remove(_ name: [UInt8]) -> Bool {
        guard !stamps.isEmpty else { return false }
        let (found, i) = search(name)
        if found { stamps.remove(at: i) }
        return found
    }

    mutating func removeAll() { stamps.removeAll() }

    /// Writes the journal to `meta`: its stored form, or no entry when it is empty.
    func write(_ meta: Database, in txn: borrowing some FoldTables & ~Copyable) throws {
        if stamps.isEmpty {
            _ = try txn.delete(meta, key: MetaKey.markStamps)
        } else {
            try txn.put(meta, key: MetaKey.markStamps, value: encoded())
        }
    }

    private static func corrupt(_ reason: String) -> StoreError {
        StoreError(.corruptRecord, "the SyncMark stamp journal (meta \"markStamps\"): \(reason)")
    }
}
