import Foundation
import FreshetLMDB

extension Store {
    /// Counts records by kind and collection, sizes, free pages, pending mutations and readers
    /// (`mdb_stat`, `mdb_env_info`, `mdb_reader_list`), and LSNs missing from the log
    /// (``StoreStatistics/missingRecords``). The log is scanned in short read transactions of
    /// at most 4,096 records; the store is only read.
    ///
    /// - Throws: ``ToolError/store`` when the store cannot be read.
    public func statistics() throws(ToolError) -> StoreStatistics {
        var stats = StoreStatistics()
        stats.storeFormat = Int(formatVersion)
        do {
            try checkOpen()
            var perCollection: [String: StoreStatistics.Collection] = [:]
            var next = LSN(1)
            var done = false
            // The end when `stats` starts: a live store's later appends are left out.
            let (end, assigned) = try LogFolder.logEnd(of: self)
            // Gaps after the latest checkpoint's throughLSN are problems (LSNContinuity).
            var continuity = LSNContinuity(after: try latestCheckpoint()?.throughLSN ?? .zero)
            while !done, next <= end {
                done = true
                try env.read { txn in
                    var n = 0
                    try txn.forEach(state.dbs.log, from: next.keyBytes) { key, value in
                        guard key.count == 8 else { return true }
                        if n == LogFolder.chunkSize {
                            done = false
                            return false
                        }
                        // A damaged key stands for its intact record's LSN (``LogPosition``).
                        let position = LogPosition(key: key, value: value)
                        let lsn = position.lsn
                        // Read already: where the chunk's `MDB_SET_RANGE` landed on a damaged key.
                        if lsn < next { return true }
                        if lsn > end { return false }
                        if let gap = continuity.take(lsn) { stats.missingRecords.append(gap) }
                        n += 1
                        next = lsn.next
                        stats.records += 1
                        stats.logBytes += value.count
                        do throws(StoreError) {
                            if let error = position.damagedKeyError { throw error }
                            let record = try LogRecord.decode(Array(value), expectedLSN: lsn)
                            stats.recordsByKind[record.kind.name, default: 0] += 1
                            perCollection[record.collection, default: .init(name: record.collection, records: 0, logBytes: 0, rows: 0, rowBytes: 0)].records += 1
                            perCollection[record.collection, default: .init(name: record.collection, records: 0, logBytes: 0, rows: 0, rowBytes: 0)].logBytes += value.count
                            if stats.oldest == nil { stats.oldest = (lsn, record.timestamp) }
                            stats.newest = (lsn, record.timestamp)
                        } catch {
                            stats.unreadableRecords += 1
                        }
                        return true
                    }
                }
            }
            // Records lost at the end of the log (`meta.lastLSN` still counts them).
            if let gap = continuity.end(assigned: assigned) { stats.missingRecords.append(gap) }
            try env.read { txn in
                try txn.forEach(state.dbs.rows) { key, value in
                    guard let (name, _) = DifferenceNamer.split(Array(key)) else { return true }
                    perCollection[name, default: .init(name: name, records: 0, logBytes: 0, rows: 0, rowBytes: 0)].rows += 1
                    perCollection[name, default: .init(name: name, records: 0, logBytes: 0, rows: 0, rowBytes: 0)].rowBytes += value.count
                    return true
                }
                stats.pendingMutations = try txn.count(state.dbs.pending)
                let dbs = state.dbs
                for (name, db) in [("log", dbs.log), ("rows", dbs.rows), ("rowIndex", dbs.rowIndex), ("marks", dbs.marks), ("meta", dbs.meta),
                                   ("pending", dbs.pending), ("mutations", dbs.mutations), ("idMap", dbs.idMap), ("confirmed", dbs.confirmed)] {
                    stats.entriesByDatabase[name] = try txn.statistics(db).entries
                }
                let info = try txn.environmentStatistics()
                stats.mapBytes = info.mapSize
                stats.pageSize = info.pageSize
                stats.usedPages = info.lastPage + 1
                stats.readerSlots = info.maxReaders
                stats.freePages = try txn.freePageCount()
                // This transaction holds one slot itself.
                stats.activeReaders = max(0, try txn.readers().filter { $0.transactionID != nil }.count - 1)
            }
            stats.collections = perCollection.values.sorted {
                ($0.logBytes + $0.rowBytes, $1.name) > ($1.logBytes + $1.rowBytes, $0.name)
            }
            let attributes = try FileManager.default.attributesOfItem(atPath: directory.path + "/data.mdb")
            stats.fileBytes = (attributes[.size] as? NSNumber)?.intValue ?? 0
            return stats
        } catch {
            throw ToolError.wrapping(error, doing: "reading statistics of \(displayPath)")
        }
    }
}
