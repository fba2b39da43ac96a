import Foundation
import FreshetLMDB

extension Store {
    /// Recovers from a damaged store, for an app whose ``Store/init(directory:configuration:dependencies:create:)``
    /// threw ``StoreError/corrupted``: moves `directory` aside to
    /// `<directory>.damaged-<yyyyMMdd-HHmmss>` (a `-2`, `-3` … suffix when taken; nothing in it
    /// is changed), opens a new empty store in `directory`, and proposes again every mutation
    /// that the readable part of the old log shows as unresolved — same mutation ID, in LSN
    /// order, in one transaction — so the user's unsent changes survive. Fetched rows are not
    /// carried over: they are a cache, and the next refresh fetches them.
    ///
    /// The old log is read with ``DataFile/records(inDatabase:)`` (plain `pread`, every page
    /// checked, damaged pages skipped), never by mapping the damaged file; each record must
    /// pass its CRC-32C. A mutation whose confirmation or rollback sat on a lost page is
    /// proposed again; the server recognises it by its idempotency key.
    ///
    /// Call it only after opening failed and with no other process using the directory.
    /// - Returns: the new store and what was done.
    /// - Throws: ``StoreError/notAStore`` when `directory` does not exist;
    ///   ``StoreError/permissionDenied`` or ``StoreError/storage`` when it cannot be moved;
    ///   whatever opening the new store throws (it is then left moved aside, and the new
    ///   directory as that failure left it).
    public static func recoverDamaged(directory: URL, configuration: Configuration = Configuration(), dependencies: Dependencies = .live) async throws(StoreError) -> (store: Store, recovery: DamagedStoreRecovery) {
        let path = directory.standardizedFileURL.path
        guard try StoreFiles.identity(of: path) != nil else { throw StoreError(.notAStore, "\(path) does not exist") }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        let base = path + ".damaged-" + formatter.string(from: dependencies.now())
        var target = base
        var suffix = 1
        while try StoreFiles.identity(of: target) != nil {
            suffix += 1
            target = base + "-\(suffix)"
        }
        guard rename(path, target) == 0 else { throw StoreFiles.error(errno, "cannot move \(path) to \(target)") }
        let found = readableMutations(in: target + "/data.mdb")
        let store = try Store(directory: URL(fileURLWithPath: path), configuration: configuration, dependencies: dependencies)
        if !found.proposals.isEmpty {
            let events = found.proposals.map { (collection: $0.collection, event: Event.mutationProposed($0.proposal)) }
            try await store.append(events)
            if store.sendsMutations {
                for queue in Set(found.proposals.map(\.proposal.mutation.queue)) { store.mutationQueue.kick(queue) }
            }
        }
        let recovery = DamagedStoreRecovery(damagedCopy: URL(fileURLWithPath: target), recoveredMutations: found.proposals.map(\.proposal.id),
                                            readableRecords: found.readable, unreadableRecords: found.unreadable, damagedPages: found.damagedPages)
        return (store, recovery)
    }

    /// The unresolved `mutationProposed` events in the readable part of a damaged file's log.
    static func readableMutations(in dataPath: String) -> (proposals: [(collection: String, proposal: Event.MutationProposed)], readable: Int, unreadable: Int, damagedPages: Int) {
        let records: DataFile.Records
        do {
            records = try DataFile(path: dataPath).records(inDatabase: "log")
        } catch {
            // No readable log (both meta pages or the main tree lost): nothing to carry over.
            return ([], 0, 0, 0)
        }
        var proposals: [(collection: String, proposal: Event.MutationProposed)] = []
        var resolved = Set<MutationID>()
        var readable = 0, unreadable = 0
        for (key, value) in records.entries {
            let expected = key.count == 8 ? LSN(key.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }) : nil
            let record: LogRecord
            do {
                record = try LogRecord.decode(value, expectedLSN: expected)
            } catch {
                unreadable += 1
                continue
            }
            readable += 1
            switch record.event {
            case .mutationProposed(let p): proposals.append((record.collection, p))
            case .mutationConfirmed(let c): resolved.insert(c.id)
            case .mutationRolledBack(let r): resolved.insert(r.id)
            default: break
            }
        }
        var seen = Set<MutationID>()
        let pending = proposals.filter { !resolved.contains($0.proposal.id) && seen.insert($0.proposal.id).inserted }
        return (pending, readable, unreadable, records.damagedPages)
    }
}
