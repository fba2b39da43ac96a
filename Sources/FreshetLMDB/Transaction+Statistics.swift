internal import CLMDB
import Foundation

/// Size and usage facts for `freshet stats`, read inside a transaction.
extension Transaction {
    /// What `mdb_stat` says about one database.
    package struct DatabaseStatistics: Sendable, Hashable {
        /// Keys in the database.
        package var entries: Int
        /// Branch, leaf and overflow pages the database's B+tree uses.
        package var pages: Int
        /// Height of the B+tree.
        package var depth: Int
    }

    /// The environment's size facts (`mdb_env_info`, `mdb_env_stat`).
    package struct EnvironmentStatistics: Sendable, Hashable {
        /// The memory map size in bytes: the largest the data file may grow to.
        package var mapSize: Int
        /// The page size in bytes.
        package var pageSize: Int
        /// The number of the last page used; `lastPage + 1` pages are in the file's used part.
        package var lastPage: Int
        /// Reader slots ever used (`me_numreaders`) and the table's size (`me_maxreaders`).
        package var readerSlotsUsed: Int
        package var maxReaders: Int
    }

    /// One entry of the reader lock table (`mdb_reader_list`).
    package struct Reader: Sendable, Hashable {
        package var pid: Int32
        /// The transaction ID it reads, or nil when the slot is held without a transaction.
        package var transactionID: UInt64?
    }

    /// `mdb_stat` of `db`.
    package func statistics(_ db: Database) throws(LMDBError) -> DatabaseStatistics {
        var stat = MDB_stat()
        try check(mdb_stat(handle, db.dbi, &stat), "mdb_stat(\(db.name))")
        return DatabaseStatistics(entries: stat.ms_entries, pages: stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages, depth: Int(stat.ms_depth))
    }

    /// `mdb_env_info` and `mdb_env_stat` of this transaction's environment.
    package func environmentStatistics() throws(LMDBError) -> EnvironmentStatistics {
        let env = mdb_txn_env(handle)
        var info = MDB_envinfo()
        try check(mdb_env_info(env, &info), "mdb_env_info")
        var stat = MDB_stat()
        try check(mdb_env_stat(env, &stat), "mdb_env_stat")
        return EnvironmentStatistics(mapSize: info.me_mapsize, pageSize: Int(stat.ms_psize), lastPage: info.me_last_pgno,
                                     readerSlotsUsed: Int(info.me_numreaders), maxReaders: Int(info.me_maxreaders))
    }

    /// Pages on LMDB's free list (the free-page database, DBI 0), as `mdb_stat -f` counts
    /// them: each entry holds a count followed by that many page numbers.
    package func freePageCount() throws(LMDBError) -> Int {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(handle, 0, &cursor), "mdb_cursor_open(free list)")
        guard let cursor else { throw LMDBError(code: EINVAL, function: "mdb_cursor_open") }
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        var total = 0
        var rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
        while rc == 0 {
            if value.mv_size >= MemoryLayout<Int>.size, let data = value.mv_data {
                total += data.loadUnaligned(as: Int.self)
            }
            rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try check(rc, "mdb_cursor_get(free list)") }
        return total
    }

    /// The reader lock table (`mdb_reader_list`), this transaction's own slot included.
    package func readers() throws(LMDBError) -> [Reader] {
        final class Lines { var text: [String] = [] }
        let lines = Lines()
        let rc = withExtendedLifetime(lines) {
            mdb_reader_list(mdb_txn_env(handle), { message, context in
                guard let message, let context else { return 0 }
                Unmanaged<Lines>.fromOpaque(context).takeUnretainedValue().text.append(String(cString: message))
                return 0
            }, Unmanaged.passUnretained(lines).toOpaque())
        }
        if rc < 0 { try check(rc, "mdb_reader_list") }
        // Lines after the header: "%10d %zx %s" — pid, thread, txnid or "-".
        return lines.text.compactMap { line in
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.count >= 3, let pid = Int32(fields[0]) else { return nil }
            return Reader(pid: pid, transactionID: UInt64(fields[2]))
        }
    }
}
