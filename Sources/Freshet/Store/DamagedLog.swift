import Foundation
import FreshetLMDB

/// What ``Store/recoverDamaged(directory:configuration:dependencies:)`` can read from a
/// damaged `data.mdb`: the log records that pass their CRC-32C, the last LSN the store
/// assigned, the unresolved mutations and the rows of its local-only collections.
///
/// The file is read with ``DataFile/records(inDatabase:)`` (plain `pread`, every page
/// checked, damaged pages and nodes skipped), never mapped.
struct DamagedLog {
    /// The unresolved proposals, in LSN order, each once.
    var proposals: [(collection: String, proposal: Event.MutationProposed)] = []
    /// Rows of each local-only collection (written by `localWrite`, never fetched), in the
    /// collection's order, as the readable log folds them; collections without rows are absent.
    var localRows: [String: [Row]] = [:]
    /// Log records read that pass their CRC-32C and decode.
    var readable = 0
    /// Log records lost: see ``DamagedStoreRecovery/unreadableRecords``.
    var unreadable = 0
    /// Distinct damaged pages met while reading the main tree, `log` and `meta`.
    var damagedPages = 0
    /// The last LSN the damaged store assigned, as far as the file tells: the larger of
    /// `meta.lastLSN` (when readable) and the highest readable record's LSN; zero when neither.
    var lastLSN: LSN = .zero
    /// The timestamp of the highest readable record.
    var lastTime: Date?

    /// `meta.lastLSN` values at or above this are taken as damage (a store appending a
    /// million events a second would need 292,000 years to get there) and ignored.
    static let implausibleLSN = UInt64(1) << 63

    /// Reads what it can; a file whose log cannot be found at all gives an empty result.
    /// - Throws: ``StoreError/storage`` only when the scratch store for the local rows cannot
    ///   be created or written (a full disk).
    init(dataPath: String) throws(StoreError) {
        let file: DataFile
        let log: DataFile.Records
        do {
            file = try DataFile(path: dataPath)
            log = try file.records(inDatabase: "log")
        } catch {
            // No readable log (both meta pages or the main tree lost): nothing to carry over.
            return
        }
        var damaged = log.damagedPages
        var metaLast: LSN?
        do {
            let meta = try file.records(inDatabase: "meta")
            damaged.formUnion(meta.damagedPages)
            if let value = meta.entries.first(where: { $0.key == MetaKey.lastLSN })?.value, value.count == 8 {
                let n = value.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                if n < Self.implausibleLSN { metaLast = LSN(n) }
            }
        } catch {
            metaLast = nil  // the log's own LSNs are all there is
        }
        damagedPages = damaged.count

        var records: [(record: LogRecord, bytes: [UInt8])] = []
        for (key, value) in log.entries {
            guard key.count == 8 else { continue }
            let lsn = LSN(key.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            do {
                records.append((try LogRecord.decode(value, expectedLSN: lsn), value))
            } catch {
                continue  // counted below, as an LSN without a readable record
            }
        }
        readable = records.count
        lastLSN = max(metaLast ?? .zero, records.last?.record.lsn ?? .zero)
        lastTime = records.last?.record.timestamp

        // The LSNs the log should hold: after the latest readable checkpoint's throughLSN (and
        // the proposals it kept), or from 1; up to the last LSN assigned.
        let checkpoint = records.last(where: { if case .checkpoint = $0.record.event { true } else { false } })
        var expected = 0
        var start = LSN.zero
        var kept: Set<LSN> = []
        if let checkpoint, case .checkpoint(let c) = checkpoint.record.event {
            start = c.throughLSN
            kept = Set(c.keptLSNs.filter { $0 <= c.throughLSN })
            expected += kept.count
        }
        // Up to `meta.lastLSN` too: records at the log's end on a lost page are lost as well.
        let top = lastLSN
        if top > start { expected += Int(clamping: top.rawValue - start.rawValue) }
        let present = records.filter { $0.record.lsn > start || kept.contains($0.record.lsn) }.count
        unreadable = max(0, expected - present)

        proposals = Self.unresolved(records.map(\.record))
        localRows = try Self.localRows(records, checkpoint: checkpoint)
    }

    /// The proposals without a readable confirmation or rollback, each once, in LSN order.
    static func unresolved(_ records: [LogRecord]) -> [(collection: String, proposal: Event.MutationProposed)] {
        var proposals: [(collection: String, proposal: Event.MutationProposed)] = []
        var resolved = Set<MutationID>()
        for record in records {
            switch record.event {
            case .mutationProposed(let p): proposals.append((record.collection, p))
            case .mutationConfirmed(let c): resolved.insert(c.id)
            case .mutationRolledBack(let r): resolved.insert(r.id)
            default: break
            }
        }
        var seen = Set<MutationID>()
        return proposals.filter { !resolved.contains($0.proposal.id) && seen.insert($0.proposal.id).inserted }
    }

    /// Folds the readable log — from its latest readable checkpoint, or from the first record —
    /// into scratch tables in memory with the store's own ``Fold`` (records the fold refuses are
    /// skipped), and returns the rows of every collection that is local-only: it has rows, no
    /// fetch in its SyncMark, and no `fetched`, `notModified` or `changed` record in the
    /// readable log (a server's collection is a cache; its rows come back with a refresh).
    static func localRows(_ records: [(record: LogRecord, bytes: [UInt8])], checkpoint: (record: LogRecord, bytes: [UInt8])?) throws(StoreError) -> [String: [Row]] {
        var remote = Set<String>()
        for (record, _) in records {
            switch record.event {
            case .fetched, .notModified, .changed: remote.insert(record.collection)
            default: break
            }
        }
        let scratch = ScratchState(dbs: .detached())
        var folded = records
        if let checkpoint, case .checkpoint(let c) = checkpoint.record.event {
            let keptLSNs = Set(c.keptLSNs)
            let keptRecords = records.filter { keptLSNs.contains($0.record.lsn) }.map { ($0.record.lsn, $0.bytes) }
            try scratch.load(c, keptRecords: keptRecords)
            folded = records.filter { $0.record.lsn > c.throughLSN }
        }
        // Records the fold refuses (a confirmation whose proposal was lost) are skipped.
        _ = try scratch.fold(FoldChunk(folded))
        do {
            let txn = scratch.tables
            var result: [String: [Row]] = [:]
            for collection in try scratch.state.collections(in: txn) where !remote.contains(collection) {
                if try scratch.state.syncMark(collection, in: txn)?.fetchedLSN != nil { continue }
                let rows = try scratch.state.rows(collection, in: txn)
                if !rows.isEmpty { result[collection] = rows }
            }
            return result
        } catch {
            throw StoreError(error, doing: "reading the local-only rows folded from the damaged log")
        }
    }
}
