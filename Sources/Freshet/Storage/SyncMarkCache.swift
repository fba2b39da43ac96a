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
    /// Marks by collection; `.some(nil)` records that the collection has none.
    private var entries: [String: SyncMark?] = [:]
    /// Collections whose mark changed and must be written.
    private var dirty: Set<String> = []

    /// The cache's contents at one point, to go back to when a nested transaction aborts.
    struct Checkpoint {
        fileprivate let entries: [String: SyncMark?]
        fileprivate let dirty: Set<String>
    }

    /// The cached mark: nil when the cache does not know, `.some(nil)` when there is none.
    func cached(_ collection: String) -> SyncMark?? { entries[collection] }

    /// Remembers a mark as read from the database (not to be written).
    func remember(_ mark: SyncMark?, for collection: String) { entries[collection] = .some(mark) }

    /// Replaces the mark; it is written by ``flush(into:database:)``.
    func set(_ mark: SyncMark, for collection: String) {
        entries[collection] = .some(mark)
        dirty.insert(collection)
    }

    /// Records that the collection has no mark any more (an eviction); its stored mark is
    /// deleted by ``flush(into:database:)``.
    func remove(_ collection: String) {
        entries[collection] = .some(nil)
        dirty.insert(collection)
    }

    func checkpoint() -> Checkpoint { Checkpoint(entries: entries, dirty: dirty) }

    func restore(_ checkpoint: Checkpoint) {
        entries = checkpoint.entries
        dirty = checkpoint.dirty
    }

    /// Writes every changed mark, once each (deletes a removed one), and forgets which changed.
    func flush(into txn: borrowing some FoldTables & ~Copyable, database: Database) throws {
        for collection in dirty.sorted() {
            switch entries[collection] {
            case .some(.some(let mark)): try txn.put(database, key: Array(collection.utf8), value: mark.encoded())
            case .some(.none): _ = try txn.delete(database, key: Array(collection.utf8))
            case .none: break
            }
        }
        dirty = []
    }
}
