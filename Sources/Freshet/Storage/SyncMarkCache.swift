import FreshetLMDB

/// The SyncMarks one group commit has read or changed, kept decoded: during a commit each
/// collection's mark is decoded at most once, and encoded and written once, when the commit
/// ends (``flush(into:database:)``), instead of once per event.
///
/// The writer makes one per commit and hands it to the fold through
/// ``MaterializedState/marks``. A batch folded in a nested transaction that fails is rolled
/// back in the cache too (``checkpoint()`` / ``restore(_:)``), so an aborted batch never
/// leaves a mark behind. Only the writer's queue touches it, during one commit.
final class SyncMarkCache: @unchecked Sendable {
    // @unchecked: used by one thread (the writer's queue) for the length of one commit.
    /// A collection's mark (nil: it has none) and whether it changed and must be written.
    /// One entry per collection, not a map and a set of changed names: the fold reads and
    /// replaces a mark per event, and each name hashed costs (docs/performance.md, W5).
    fileprivate struct Entry {
        var mark: SyncMark?
        var dirty: Bool

        mutating func stamp(lsn: LSN, rowsChanged: Bool) {
            if case .none = mark { mark = SyncMark() }
            mark?.lastLSN = lsn
            if rowsChanged { mark?.rowsLSN = lsn }
            dirty = true
        }
    }

    /// Each collection's entry in ``entries``. The entries sit in an array so that
    /// ``stamp(_:lsn:rowsChanged:)`` changes one in place through the array's subscript: through
    /// the dictionary's, the entry (and its mark's fields) was copied out and back, which cost
    /// more than the hash (docs/performance.md, "Issue 8 speed round 4 (fold side)").
    private var slots: [String: Int] = [:]
    private var entries: [Entry] = []

    /// The cache's contents at one point, to go back to when a nested transaction aborts.
    struct Checkpoint {
        fileprivate let slots: [String: Int]
        fileprivate let entries: [Entry]
    }

    /// The cached mark: nil when the cache does not know, `.some(nil)` when there is none.
    func cached(_ collection: String) -> SyncMark?? { slots[collection].map { entries[$0].mark } }

    private func put(_ entry: Entry, for collection: String) {
        if let i = slots[collection] {
            entries[i] = entry
        } else {
            slots[collection] = entries.count
            entries.append(entry)
        }
    }

    /// Remembers a mark as read from the database (not to be written).
    func remember(_ mark: SyncMark?, for collection: String) { put(Entry(mark: mark, dirty: false), for: collection) }

    /// Replaces the mark; it is written by ``flush(into:database:)``.
    func set(_ mark: SyncMark, for collection: String) {
        put(Entry(mark: mark, dirty: true), for: collection)
    }

    /// Sets the cached mark's `lastLSN` (and `rowsLSN` when `rowsChanged`) in place, as the
    /// fold of a local write does, and marks it to be written; a collection cached as having
    /// no mark gets a new one (``SyncMark/init()``). Returns false, changing nothing, when the
    /// cache does not know the collection. One hash of the name and no copy of the mark's other
    /// fields, where reading the mark and setting it back hashed twice and copied (and
    /// retained) every field (docs/performance.md, "Issue 8 speed round 4 (fold side)").
    func stamp(_ collection: String, lsn: LSN, rowsChanged: Bool) -> Bool {
        guard let i = slots[collection] else { return false }
        entries[i].stamp(lsn: lsn, rowsChanged: rowsChanged)
        return true
    }

    /// Records that the collection has no mark any more (an eviction); its stored mark is
    /// deleted by ``flush(into:database:)``.
    func remove(_ collection: String) {
        put(Entry(mark: nil, dirty: true), for: collection)
    }

    func checkpoint() -> Checkpoint { Checkpoint(slots: slots, entries: entries) }

    func restore(_ checkpoint: Checkpoint) {
        slots = checkpoint.slots
        entries = checkpoint.entries
    }

    /// Writes every changed mark, once each and in name order (deletes a removed one), and
    /// forgets which changed.
    func flush(into txn: borrowing some FoldTables & ~Copyable, database: Database) throws {
        let changed = slots.filter { entries[$0.value].dirty }.sorted { $0.key < $1.key }
        for (collection, i) in changed {
            if let mark = entries[i].mark {
                try txn.put(database, key: Array(collection.utf8), value: mark.encoded())
            } else {
                _ = try txn.delete(database, key: Array(collection.utf8))
            }
            entries[i].dirty = false
        }
    }
}
