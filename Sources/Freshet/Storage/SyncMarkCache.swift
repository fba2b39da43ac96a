import FreshetLMDB

/// The SyncMarks one group commit has read or changed, kept decoded: during a commit each
/// collection's mark is decoded at most once, and encoded and written once, when the commit
/// ends (``flush(into:marks:meta:)``), instead of once per event.
///
/// The writer makes one per commit and hands it to the fold through
/// ``MaterializedState/marks``. A batch folded in a nested transaction that fails is rolled
/// back in the cache too (``checkpoint()`` / ``restore(_:)``), so an aborted batch never
/// leaves a mark behind. Only the writer's queue touches it, during one commit.
///
/// Each collection the cache knows has a ``Slot``: found by name once per event
/// (``slot(for:)``), it gives the collection's key prefix (``prefix(at:)``, built once per
/// commit instead of once per event) and stamps the mark in place (``stamp(at:lsn:rowsChanged:)``).
///
/// With ``journals`` (the store's writer), a mark that only stamps changed during the commit
/// and that `marks` already holds is not rewritten: its LSNs go to the stamp journal in
/// `meta` (``MarkStamps``), which the commit writes anyway. The cache reads the journal once
/// per commit (``stamps(in:meta:)``) and marks read from the database have its LSNs applied.
/// The tools' scratch state folds without it: `verify` compares marks with the journal applied.
final class SyncMarkCache: @unchecked Sendable {
    // @unchecked: used by one thread (the writer's queue, a tool's folding thread) for the
    // length of one commit.

    /// A collection's mark (nil: it has none), whether it changed and must be written, and
    /// its name.
    fileprivate struct Entry {
        var mark: SyncMark?
        var dirty: Bool
        /// `marks` holds this collection's mark and only stamps changed it since it was read:
        /// the journal can take its LSNs.
        var onlyStamped: Bool
        let name: String

        mutating func stamp(lsn: LSN, rowsChanged: Bool) {
            if case .none = mark {
                mark = SyncMark()
                onlyStamped = false
            }
            mark?.lastLSN = lsn
            if rowsChanged { mark?.rowsLSN = lsn }
            dirty = true
        }
    }

    /// Where a collection's entry is, from ``slot(for:)``; valid until ``restore(_:)``.
    struct Slot {
        fileprivate let index: Int
    }

    /// The entries, one per collection, and a hash index over their names' UTF-8 bytes
    /// (``ByteHashIndex``, payload: the entry's index), the names kept one after another in
    /// one array (entry `i`'s ends at `nameEnds[i]`) to compare without touching an entry.
    /// Until issue 8's speed round 5 a `[String: Int]` found the entry: SipHash of the name per
    /// lookup, and a mark looked up twice per local write (docs/performance.md, "Issue 8 speed
    /// round 5 (fold side)").
    fileprivate struct Contents {
        var names = ByteHashIndex()
        var entries: [Entry] = []
        /// Entry `i`'s key prefix (``Keys/collection(_:)``), apart from the entry: reading it
        /// from the entry copied the whole entry, mark and all, through its value witness.
        var prefixes: [[UInt8]] = []
        var nameBytes: [UInt8] = []
        var nameEnds: [Int] = []
        /// The stamp journal as this commit changed it; nil until read.
        var stamps: MarkStamps?
    }

    /// Behind a pointer, not a stored `var`: a class's stored property costs a dynamic
    /// exclusivity check per access, several per event (the same reason as ``MemoryTables``'s).
    /// One thread uses the cache, and no method calls out while it changes the contents.
    private let contents: UnsafeMutablePointer<Contents>

    /// Whether stamp-only changes go to the stamp journal (``MarkStamps``) instead of `marks`.
    let journals: Bool

    init(journals: Bool = false) {
        self.journals = journals
        contents = .allocate(capacity: 1)
        contents.initialize(to: Contents())
    }

    deinit {
        contents.deinitialize(count: 1)
        contents.deallocate()
    }

    /// The cache's contents at one point, to go back to when a nested transaction aborts.
    struct Checkpoint {
        fileprivate let contents: Contents
    }

    /// The slot of `collection`'s entry, or nil when the cache does not know it.
    func slot(for collection: String) -> Slot? {
        if let found = collection.utf8.withContiguousStorageIfAvailable({ slot(named: UnsafeRawBufferPointer($0)) }) {
            return found
        }
        return Array(collection.utf8).withUnsafeBytes { slot(named: $0) }
    }

    /// The slot of the collection whose name is `name` (UTF-8), if the cache knows it.
    private func slot(named name: UnsafeRawBufferPointer) -> Slot? {
        let hash = ByteHashIndex.hash(name)
        return contents.pointee.nameBytes.withUnsafeBytes { all in
            contents.pointee.nameEnds.withUnsafeBufferPointer { ends in
                contents.pointee.names.find(hash: hash) { payload in
                    let i = Int(payload)
                    let start = i == 0 ? 0 : ends[i - 1]
                    return ends[i] - start == name.count
                        && OrderedTable.compare(UnsafeRawBufferPointer(rebasing: all[start..<ends[i]]), name) == 0
                }
            }
        }.map { Slot(index: Int($0.payload)) }
    }

    /// The key prefix of the collection at `slot` (``Keys/collection(_:)`` of its name).
    func prefix(at slot: Slot) -> [UInt8] { contents.pointee.prefixes[slot.index] }

    /// The cached mark: nil when the cache does not know, `.some(nil)` when there is none.
    func cached(_ collection: String) -> SyncMark?? { slot(for: collection).map { contents.pointee.entries[$0.index].mark } }

    /// The stamp journal: read from `meta` in `txn` the first time in a commit, then as this
    /// commit changed it. Without ``journals`` it is empty and never read.
    func stamps(in txn: borrowing some FoldTables & ~Copyable, meta: Database) throws -> MarkStamps {
        if let stamps = contents.pointee.stamps { return stamps }
        let stamps = journals ? try MarkStamps.read(meta, in: txn) : MarkStamps()
        contents.pointee.stamps = stamps
        return stamps
    }

    private func put(_ mark: SyncMark?, dirty: Bool, for collection: String) {
        // Read from `marks` (not dirty): only stamps may go to the journal while the entry is
        // as read. Set or removed (dirty): the mark is written whole.
        let onlyStamped = !dirty && mark != nil
        if let slot = slot(for: collection) {
            contents.pointee.entries[slot.index].mark = mark
            contents.pointee.entries[slot.index].dirty = dirty
            contents.pointee.entries[slot.index].onlyStamped = onlyStamped
            return
        }
        let index = contents.pointee.entries.count
        contents.pointee.entries.append(Entry(mark: mark, dirty: dirty, onlyStamped: onlyStamped, name: collection))
        contents.pointee.prefixes.append(Keys.collection(collection))
        contents.pointee.nameBytes.append(contentsOf: collection.utf8)
        contents.pointee.nameEnds.append(contents.pointee.nameBytes.count)
        let start = index == 0 ? 0 : contents.pointee.nameEnds[index - 1]
        contents.pointee.nameBytes.withUnsafeBytes { all in
            contents.pointee.names.insert(UInt64(index), hash: ByteHashIndex.hash(UnsafeRawBufferPointer(rebasing: all[start...])))
        }
    }

    /// Remembers a mark as read from the database (not to be written).
    func remember(_ mark: SyncMark?, for collection: String) { put(mark, dirty: false, for: collection) }

    /// Replaces the mark; it is written by ``flush(into:marks:meta:)``.
    func set(_ mark: SyncMark, for collection: String) { put(mark, dirty: true, for: collection) }

    /// Sets the cached mark's `lastLSN` (and `rowsLSN` when `rowsChanged`) in place, as the
    /// fold of a local write does, and marks it to be written; a collection cached as having
    /// no mark gets a new one (``SyncMark/init()``). Returns false, changing nothing, when the
    /// cache does not know the collection.
    func stamp(_ collection: String, lsn: LSN, rowsChanged: Bool) -> Bool {
        guard let slot = slot(for: collection) else { return false }
        stamp(at: slot, lsn: lsn, rowsChanged: rowsChanged)
        return true
    }

    /// ``stamp(_:lsn:rowsChanged:)`` of the collection at `slot`: no lookup by name, and no
    /// copy of the mark's other fields, where reading the mark and setting it back hashed
    /// twice and copied (and retained) every field (docs/performance.md, "Issue 8 speed round 4
    /// (fold side)").
    func stamp(at slot: Slot, lsn: LSN, rowsChanged: Bool) {
        contents.pointee.entries[slot.index].stamp(lsn: lsn, rowsChanged: rowsChanged)
    }

    /// Records that the collection has no mark any more (an eviction); its stored mark is
    /// deleted by ``flush(into:marks:meta:)``.
    func remove(_ collection: String) { put(nil, dirty: true, for: collection) }

    func checkpoint() -> Checkpoint { Checkpoint(contents: contents.pointee) }

    func restore(_ checkpoint: Checkpoint) { contents.pointee = checkpoint.contents }

    /// Writes every changed mark, once each and in name order (deletes a removed one), and
    /// forgets which changed. With ``journals``, a mark that `marks` holds and only stamps
    /// changed has its LSNs put in the stamp journal instead, and any other changed mark leaves
    /// it; a journal over its limits (``MarkStamps/isOverfull``) is emptied into `marks`. The
    /// journal is written to `meta` when it changed.
    func flush(into txn: borrowing some FoldTables & ~Copyable, marks database: Database, meta: Database) throws {
        // In the order of the names' bytes, as the database sorts its keys (a `String`
        // comparison, Unicode's order, was 2% of the W5 replay's folding thread).
        let changed = contents.pointee.nameBytes.withUnsafeBytes { all in
            contents.pointee.nameEnds.withUnsafeBufferPointer { ends in
                func name(_ i: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: all[(i == 0 ? 0 : ends[i - 1])..<ends[i]]) }
                return contents.pointee.entries.indices.filter { contents.pointee.entries[$0].dirty }
                    .sorted { OrderedTable.compare(name($0), name($1)) < 0 }
            }
        }
        guard !changed.isEmpty else { return }
        var stamps = journals ? try self.stamps(in: txn, meta: meta) : MarkStamps()
        let before = stamps
        for i in changed {
            let entry = contents.pointee.entries[i]
            let key = Array(entry.name.utf8)
            if journals, entry.onlyStamped, let mark = entry.mark {
                stamps.set(key, lastLSN: mark.lastLSN, rowsLSN: mark.rowsLSN)
            } else {
                if let mark = entry.mark {
                    try txn.put(database, key: key, value: mark.encoded())
                } else {
                    _ = try txn.delete(database, key: key)
                }
                stamps.remove(key)
                // As `marks` now holds it: later stamps may go to the journal.
                contents.pointee.entries[i].onlyStamped = entry.mark != nil
            }
            contents.pointee.entries[i].dirty = false
        }
        guard journals, stamps != before else { return }
        if stamps.isOverfull {
            // Each journaled collection's mark written whole with its stamped LSNs; a stamp
            // readers ignore (no mark, or not newer than it: MarkStamps) is dropped.
            for stamp in stamps.stamps {
                guard let bytes = try txn.get(database, key: stamp.name) else { continue }
                let mark = try SyncMark.decodeStored(bytes, of: String(decoding: stamp.name, as: UTF8.self))
                guard stamps.applies(stamp, over: mark.lastLSN) else { continue }
                try txn.put(database, key: stamp.name, value: stamps.applied(to: mark, name: stamp.name).encoded())
            }
            stamps.removeAll()
        }
        try stamps.write(meta, in: txn)
        contents.pointee.stamps = stamps
    }
}
