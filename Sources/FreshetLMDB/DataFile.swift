import Foundation

/// An LMDB `data.mdb` read with plain `pread(2)` and bounds-checked Swift, never mapped: the
/// checks a store runs before it lets liblmdb map a file, and a tolerant reader that gets
/// what it can out of a damaged file.
///
/// liblmdb trusts its file: a page number past the end of the file is a `SIGBUS`, a node
/// offset outside its page a `SIGSEGV`. ``check()`` looks first at everything LMDB will
/// follow, so such a file is a ``DataFileDamage`` error and not a crash.
///
/// The layout read here is LMDB 0.9's (liblmdb `mdb.c`, structures `MDB_page`, `MDB_meta`,
/// `MDB_db`, `MDB_node`; <http://www.lmdb.tech/doc/>), on a 64-bit build, in the machine's
/// byte order (the file is not portable between byte orders either):
///
/// | structure | bytes |
/// |---|---|
/// | page header (16 bytes) | page number (8) · pad (2) · flags (2) · lower (2) · upper (2); an overflow page holds its page count (4) in place of lower and upper |
/// | meta (pages 0 and 1, after the header) | magic `0xBEEFC0DE` (4) · version 1 (4) · address (8) · map size (8) · free tree (48) · main tree (48) · last page (8) · transaction ID (8) |
/// | tree (`MDB_db`, 48 bytes) | pad (4, the page size in the free tree) · flags (2) · depth (2) · branch, leaf, overflow pages and entries (8 each) · root page (8, all ones when empty) |
/// | branch and leaf pages | after the header, one 2-byte offset per node (`(lower − 16) / 2` nodes); nodes lie between `upper` and the page end |
/// | node (8 bytes + key + data) | data size, or child page, low and high 16 bits (2 + 2) · flags (2; a branch node's child page bits 32 ... 47) · key size (2) · key · data |
///
/// Node flags: `F_BIGDATA` (1, the data is the 8-byte number of its first overflow page),
/// `F_SUBDATA` (2, the data is a named database's tree), `F_DUPDATA` (4). Page flags:
/// `P_BRANCH` (1), `P_LEAF` (2), `P_OVERFLOW` (4), `P_META` (8), `P_LEAF2` (0x20).
/// LMDB uses the meta page with the larger transaction ID (page 0 on a tie).
package final class DataFile {
    /// One of the two meta pages.
    package struct Meta: Sendable, Hashable {
        /// Which one: page 0 or page 1.
        package var page: Int
        package var pageSize: Int
        package var mapSize: UInt64
        /// LMDB's `mm_last_pg`: the last page any transaction allocated, written or not.
        package var lastPage: Int
        package var transactionID: UInt64
        package var freeTree: Tree
        package var mainTree: Tree
    }

    /// A B-tree's description (`MDB_db`).
    package struct Tree: Sendable, Hashable {
        package var pad: UInt32
        package var flags: UInt16
        package var depth: Int
        /// Pages of the tree by kind (`md_branch_pages`, `md_leaf_pages`, `md_overflow_pages`).
        package var branchPages: UInt64
        package var leafPages: UInt64
        package var overflowPages: UInt64
        package var entries: UInt64
        /// The root page; nil for an empty tree (LMDB's `P_INVALID`, all ones).
        package var root: Int?
    }

    /// What a clean ``check()`` saw.
    package struct Summary: Sendable, Hashable {
        package var pageSize: Int
        /// The last page in use, as the meta page says (LMDB's `mm_last_pg`). The file may end
        /// before it: LMDB counts a page when a transaction allocates it, and one allocated
        /// and freed in the same transaction is never written. Every page the walk reached
        /// is inside the file.
        package var lastPage: Int
        package var transactionID: UInt64
        /// Pages reached from the meta page: tree pages and overflow pages.
        package var pagesVisited: Int
        /// The named databases found in the main tree, in key order.
        package var databases: [String]
    }

    /// What ``records(inDatabase:)`` could read.
    package struct Records: Sendable {
        /// Key and value of each readable entry, in key order.
        package var entries: [(key: [UInt8], value: [UInt8])]
        /// Pages that could not be read or were malformed, each once: the named database's
        /// pages and the main-tree pages walked to find it. Entries on them are missing.
        package var damagedPages: Set<Int>
        /// Leaf entries seen but skipped because their node or overflow pages were damaged.
        package var skippedEntries: Int
    }

    static let headerSize = 16
    static let metaMagic: UInt32 = 0xBEEF_C0DE
    static let dataVersion: UInt32 = 1
    static let treeSize = 48
    static let metaBytes = 16 + 136
    static let invalidPage = UInt64.max
    /// LMDB's deepest tree is far shallower; a larger depth is damage, and this bounds recursion.
    static let maxDepth = 32

    private let fd: Int32
    /// The file's path.
    package let path: String
    /// The file's size in bytes now (`fstat` on each use): another process's writer may grow
    /// the file while this reads it, and a meta page read later may use pages the size taken
    /// at open did not reach yet. 0 if `fstat` fails on the open descriptor.
    package var size: Int {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return 0 }
        return Int(info.st_size)
    }

    /// Opens `path` for reading (`O_RDONLY`); nothing is mapped or written.
    /// - Throws: ``LMDBError`` with the `errno` of `open` or `fstat`.
    package init(path: String) throws(LMDBError) {
        precondition(MemoryLayout<Int>.size == 8, "DataFile reads the 64-bit LMDB layout")
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw LMDBError(code: errno, function: "open(\(path))") }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            _ = close(fd)
            throw LMDBError(code: code, function: "fstat(\(path))")
        }
        self.fd = fd
        self.path = path
    }

    deinit { _ = close(fd) }

    /// The largest size ``requireInside(offset:count:page:)`` has seen: a read inside it needs no
    /// `fstat` (a store's file only grows while open; one cut short meanwhile makes `pread`
    /// come back short, which is damage too). An open's check reads every page, so an
    /// `fstat` per page was a system call per page.
    private var knownSize = 0

    /// Checks everything liblmdb follows when it opens and reads the file: both meta pages
    /// (page flag, magic, version, page size), and every page reachable from the meta page
    /// LMDB will use — the free-page tree, the main tree and each named database's tree:
    /// inside the file, page numbers in range and matching the page, no page reached twice,
    /// `lower`/`upper` and every node (and its key and data) inside its page, branch depth
    /// consistent with the tree's depth, overflow runs inside the file with their page count,
    /// free-page lists the size they claim.
    ///
    /// The file may end before the meta page's last page: LMDB 0.9 (without `MDB_WRITEMAP`)
    /// counts a page in `mm_last_pg` as soon as a transaction allocates it, and a page
    /// allocated and freed in the same transaction is never written (`mdb_freelist_save`
    /// drops such loose pages from the dirty list; freed overflow runs likewise). LMDB never
    /// reads a free page, so a short file is damage only when a page the walk reaches lies
    /// past its end; that is reported as the file being cut short, naming the meta page.
    ///
    /// Another process may commit while this reads (without a read transaction, its pages
    /// may be reused under the walk): when the meta page's transaction ID changed by the
    /// end, the walk is repeated, up to five times; a file that changes every time was
    /// being written by a live LMDB writer, and is taken as sound.
    ///
    /// Costs one `pread` of the pages in use when they are at most ``windowLimit`` bytes
    /// (`readingPagesInOneGo`, the default), a map of the file when they are more, otherwise
    /// (`readingPagesInOneGo` false) one `pread` per page in use (about a millisecond per 4 MiB
    /// from the page cache). Every way checks the same and finds the same damage.
    /// - Throws: ``DataFileDamage`` naming the page and what is wrong with it.
    ///
    /// A file of more than `windowLimit` bytes (``windowLimit`` unless a test asks for less) is
    /// read in one go as well, through a read-only map of it (``mapping(pages:pageSize:)``).
    package func check(readingPagesInOneGo: Bool = true, windowLimit: Int = DataFile.windowLimit) throws(DataFileDamage) -> Summary {
        var last: Summary?
        for _ in 0..<5 {
            let meta = try currentMeta()
            var walker = Walker(file: self, meta: meta, tolerant: false)
            if readingPagesInOneGo {
                walker.window = window(pages: meta.lastPage + 1, pageSize: meta.pageSize, limit: windowLimit)
                if walker.window == nil { walker.mapping = mapping(pages: meta.lastPage + 1, pageSize: meta.pageSize) }
            }
            var failure: DataFileDamage?
            do {
                try walker.walkAll()
            } catch where error.isPastEnd {
                failure = cutShort(meta) ?? error
            } catch {
                failure = error
            }
            let after = try currentMeta()
            guard after.transactionID == meta.transactionID else {
                last = Summary(pageSize: meta.pageSize, lastPage: meta.lastPage, transactionID: meta.transactionID, pagesVisited: walker.visitedCount, databases: walker.databases)
                continue
            }
            if let failure { throw failure }
            return Summary(pageSize: meta.pageSize, lastPage: meta.lastPage, transactionID: meta.transactionID, pagesVisited: walker.visitedCount, databases: walker.databases)
        }
        // Five commits in a row during five walks: a live writer has the file open and mapped.
        guard let last else { throw DataFileDamage(page: nil, "the file could not be checked") }
        return last
    }

    /// Reads every entry of the named database that can be read, skipping damaged pages,
    /// from the meta page that yields more entries (the newer one on a tie): a damaged page
    /// of the newer tree may still be intact in the older one, which LMDB keeps until the
    /// next commit reuses its pages.
    /// - Throws: ``DataFileDamage`` when neither meta page is usable or the main tree has no
    ///   readable entry `name`.
    package func records(inDatabase name: String) throws(DataFileDamage) -> Records {
        let metas = try bothMetas()
        var lastError = DataFileDamage(page: nil, "no database \(name.debugDescription) in the file")
        var best: Records?
        for meta in metas.sorted(by: { $0.transactionID > $1.transactionID }) {
            var walker = Walker(file: self, meta: meta, tolerant: true)
            var found: Tree?
            walker.onEntry = { key, value, isSubDatabase in
                if isSubDatabase, key == Array(name.utf8), value.count == Self.treeSize { found = Self.tree(value, at: 0) }
            }
            do {
                try walker.walk(meta.mainTree, role: .main, descend: false)
            } catch {
                lastError = error
                continue
            }
            guard let tree = found else { continue }
            var entries: [(key: [UInt8], value: [UInt8])] = []
            var reader = Walker(file: self, meta: meta, tolerant: true)
            reader.onEntry = { key, value, _ in entries.append((key, value)) }
            do {
                try reader.walk(tree, role: .plain, descend: false)
            } catch {
                lastError = error
                continue
            }
            let records = Records(entries: entries, damagedPages: walker.damagedPageNumbers.union(reader.damagedPageNumbers), skippedEntries: reader.skippedEntries)
            if best.map({ records.entries.count > $0.entries.count }) ?? true { best = records }
        }
        guard let best else { throw lastError }
        return best
    }

    /// The meta page LMDB will use (the larger transaction ID), after checking both. The file
    /// may end before its last page (see ``check(readingPagesInOneGo:)``); here that is damage
    /// only when the last page also lies past the meta page's own map size.
    func currentMeta() throws(DataFileDamage) -> Meta {
        let (first, second) = try bothMetasStrict()
        let meta = second.transactionID > first.transactionID ? second : first
        let page = meta.page
        // LMDB writes transaction N's meta to page N mod 2 (`toggle = txn->mt_txnid & 1` in
        // mdb_env_write_meta); only a new file has ID 0 on page 1 too (mdb_env_init_meta). The
        // meta page LMDB would use (the larger ID) holding an ID of the other parity was not
        // written so: its ID is damaged, and LMDB would silently open the wrong tree (trial 16
        // finding 1). The other page's ID is not checked: LMDB never reads it unless it is the
        // larger, and overwrites it at the next commit. An ID of the right parity cannot be
        // told from a sound one (docs/reliability.md, "Damaged files").
        guard meta.transactionID == 0 || meta.transactionID & 1 == UInt64(page) else {
            throw DataFileDamage(page: page, "meta page holds transaction ID \(meta.transactionID), which LMDB writes to meta page \(1 - page) (ID N to page N mod 2): the ID is damaged")
        }
        guard meta.lastPage >= 1 else { throw DataFileDamage(page: page, "meta page says the last page in use is \(meta.lastPage); a store has at least two pages") }
        // LMDB allocates pages only inside the map (`MDB_MAP_FULL` past it) and never writes a
        // smaller map size than the meta page had, so a last page past the meta page's own map
        // size, in a file that ends before it, was not left by LMDB: cut short, no walk needed.
        let needed = (meta.lastPage + 1).multipliedReportingOverflow(by: meta.pageSize)
        if needed.overflow || UInt64(needed.partialValue) > meta.mapSize, let damage = cutShort(meta) { throw damage }
        for (tree, what) in [(meta.freeTree, "free-page tree"), (meta.mainTree, "main tree")] {
            if let root = tree.root {
                guard root >= 2, root <= meta.lastPage else { throw DataFileDamage(page: page, "the \(what)'s root page \(root) is outside pages 2 ... \(meta.lastPage)") }
                guard tree.depth >= 1, tree.depth <= Self.maxDepth else { throw DataFileDamage(page: page, "the \(what) has depth \(tree.depth)") }
            }
        }
        return meta
    }

    /// The damage of a file that ends before `meta`'s last page, once the walk met a page past
    /// its end (or the last page lies past the map); nil when the file holds every page up to
    /// the last (then the walk's own error says what is wrong).
    private func cutShort(_ meta: Meta) -> DataFileDamage? {
        let needed = (meta.lastPage + 1).multipliedReportingOverflow(by: meta.pageSize)
        // The size now: LMDB grows the file before it writes a meta page that uses new pages.
        let size = self.size
        guard needed.overflow || needed.partialValue > size else { return nil }
        return DataFileDamage(page: meta.page, "the file is \(size) bytes but its meta page uses pages 0 ... \(meta.lastPage) of \(meta.pageSize) bytes (\(needed.overflow ? "more than any file" : String(needed.partialValue)) bytes): it was cut short")
    }

    /// Both meta pages, each checked for LMDB's page flag, magic, version and page size.
    func bothMetasStrict() throws(DataFileDamage) -> (Meta, Meta) {
        let first = try readMeta(page: 0, pageSize: nil)
        let second = try readMeta(page: 1, pageSize: first.pageSize)
        return (first, second)
    }

    /// The readable meta pages (at least one), for the tolerant reader.
    private func bothMetas() throws(DataFileDamage) -> [Meta] {
        do {
            let (a, b) = try bothMetasStrict()
            return [a, b]
        } catch {
            // Meta page 0 may be the damaged one: guess the page size from common sizes.
            for pageSize in [4096, 16384, 65536, 8192, 32768, 512, 1024, 2048] {
                do {
                    let meta = try readMeta(page: 1, pageSize: pageSize)
                    if meta.pageSize == pageSize { return [meta] }
                } catch {
                    continue
                }
            }
            do {
                return [try readMeta(page: 0, pageSize: nil)]
            } catch {
                throw error
            }
        }
    }

    private func readMeta(page: Int, pageSize: Int?) throws(DataFileDamage) -> Meta {
        let offset = page * (pageSize ?? 0)
        let bytes: [UInt8]
        do {
            bytes = try read(offset: offset, count: Self.metaBytes, page: page)
        } catch {
            throw DataFileDamage(page: page, error.reason, isNotLMDB: page == 0)
        }
        guard page != 0 || Self.u32(bytes, 16) == Self.metaMagic else {
            throw DataFileDamage(page: 0, "has no LMDB meta page (magic 0x\(String(Self.u32(bytes, 16), radix: 16)))", isNotLMDB: true)
        }
        guard Self.u64(bytes, 0) == UInt64(page) else { throw DataFileDamage(page: page, "meta page holds page number \(Self.u64(bytes, 0))") }
        guard Self.u16(bytes, 10) & 0x08 != 0 else { throw DataFileDamage(page: page, "meta page lacks the meta flag (flags \(Self.u16(bytes, 10)))") }
        guard Self.u32(bytes, 16) == Self.metaMagic else { throw DataFileDamage(page: page, "meta page has magic 0x\(String(Self.u32(bytes, 16), radix: 16)), not LMDB's 0xbeefc0de") }
        guard Self.u32(bytes, 20) == Self.dataVersion else { throw DataFileDamage(page: page, "meta page has data format version \(Self.u32(bytes, 20)); LMDB 0.9 writes 1") }
        let free = Self.tree(bytes, at: 40)
        let psize = Int(free.pad)
        guard psize >= 256, psize <= 65536, psize & (psize - 1) == 0 else { throw DataFileDamage(page: page, "meta page gives page size \(psize)") }
        if let pageSize, pageSize != psize { throw DataFileDamage(page: page, "meta page gives page size \(psize), meta page 0 \(pageSize)") }
        let last = Self.u64(bytes, 136)
        guard last <= UInt64(Int.max / 65536) else { throw DataFileDamage(page: page, "meta page gives last page \(last)") }
        return Meta(page: page, pageSize: psize, mapSize: Self.u64(bytes, 32), lastPage: Int(last), transactionID: Self.u64(bytes, 144), freeTree: free, mainTree: Self.tree(bytes, at: 88))
    }

    /// The largest file whose pages ``check()`` reads with one `pread` (16 MiB): a store's
    /// open checks every page, and a system call per page was most of the check's cost
    /// (docs/performance.md, round 6). Larger files are read page by page.
    package static let windowLimit = 16 << 20

    /// Pages `0 ..< pages` read in one go — as much of them as the file holds, which may be
    /// fewer (a healthy file can end before its last page; a page past the end is then read
    /// on its own and reported missing) — or nil when they are more than ``windowLimit``
    /// bytes or the read fails (the walk then reads page by page). Only the walk uses it:
    /// meta pages are always read afresh, so a commit during the walk is still seen.
    func window(pages: Int, pageSize: Int, limit: Int = DataFile.windowLimit) -> [UInt8]? {
        let bytes = pages.multipliedReportingOverflow(by: pageSize)
        guard !bytes.overflow, bytes.partialValue <= limit else { return nil }
        do {
            return try read(offset: 0, count: min(bytes.partialValue, size), page: 0)
        } catch {
            return nil
        }
    }

    /// The file's first pages `0 ..< pages` mapped read-only (as many as the file holds now),
    /// for a walk of a file too large for a ``window(pages:pageSize:)``: no system call and no
    /// copy per page (issue 8's speed round 7; before, a `pread` of each of the 37,288 pages of
    /// W5's 146 MiB store). Nil when `mmap` fails (the walk then reads page by page). The walk
    /// reads a page of it only after ``requireInside(offset:count:page:)`` found the page inside
    /// the file, as for a `pread`; only a file cut shorter by another process during the walk
    /// could fault (`SIGBUS`), as LMDB's own map of it would.
    func mapping(pages: Int, pageSize: Int) -> Mapping? {
        let bytes = pages.multipliedReportingOverflow(by: pageSize)
        guard !bytes.overflow else { return nil }
        return Mapping(fd: fd, count: min(bytes.partialValue, size))
    }

    /// A read-only shared mapping of a file's first ``count`` bytes, unmapped when released.
    final class Mapping {
        let base: UnsafeRawPointer
        let count: Int

        init?(fd: Int32, count: Int) {
            guard count > 0, let p = mmap(nil, count, PROT_READ, MAP_SHARED, fd, 0), p != UnsafeMutableRawPointer(bitPattern: -1) else { return nil }
            base = UnsafeRawPointer(p)
            self.count = count
        }

        deinit { _ = munmap(UnsafeMutableRawPointer(mutating: base), count) }

        /// Bytes `offset ..< offset + count` when the mapping holds them.
        func bytes(offset: Int, count: Int) -> UnsafeRawBufferPointer? {
            guard offset >= 0, count >= 0, count <= self.count - offset else { return nil }
            return UnsafeRawBufferPointer(start: base + offset, count: count)
        }
    }

    /// Throws unless bytes `offset ..< offset + count` lie inside the file (an `fstat` only
    /// when they lie past the largest size seen so far): past its end is damage at `page`.
    func requireInside(offset: Int, count: Int, page: Int) throws(DataFileDamage) {
        var size = knownSize
        if offset < 0 || offset > size || count > size - offset {
            size = self.size
            knownSize = max(knownSize, size)
        }
        guard offset >= 0, offset <= size, count <= size - offset else {
            throw DataFileDamage(page: page, "page lies past the end of the \(size)-byte file", isPastEnd: true)
        }
    }

    /// `count` bytes at `offset`; a short read or an I/O error is damage at `page`.
    func read(offset: Int, count: Int, page: Int) throws(DataFileDamage) -> [UInt8] {
        try requireInside(offset: offset, count: count, page: page)
        var failure: DataFileDamage?
        // Uninitialized: every byte is written by `pread` before the array is returned.
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let n = pread(fd, buffer.baseAddress.map { $0 + done }, count - done, off_t(offset + done))
                if n < 0 {
                    let code = errno
                    if code == EINTR { continue }
                    failure = DataFileDamage(page: page, "cannot be read: \(String(cString: strerror(code)))")
                    break
                }
                if n == 0 {
                    failure = DataFileDamage(page: page, "the file ends inside the page", isPastEnd: true)
                    break
                }
                done += n
            }
            initialized = failure == nil ? count : 0
        }
        if let failure { throw failure }
        return bytes
    }

    static func tree(_ b: [UInt8], at o: Int) -> Tree {
        let root = u64(b, o + 40)
        return Tree(pad: u32(b, o), flags: u16(b, o + 4), depth: Int(u16(b, o + 6)),
                    branchPages: u64(b, o + 8), leafPages: u64(b, o + 16), overflowPages: u64(b, o + 24), entries: u64(b, o + 32),
                    root: root == invalidPage ? nil : Int(clamping: root))
    }

    static func u16(_ b: [UInt8], _ o: Int) -> UInt16 { UInt16(b[o]) | UInt16(b[o + 1]) << 8 }
    /// Little-endian integers of a page lent in place; the caller has checked `o` against the
    /// page's bounds (an `UnsafeRawBufferPointer` checks none in a release build).
    static func u16(_ b: UnsafeRawBufferPointer, _ o: Int) -> UInt16 { UInt16(littleEndian: b.loadUnaligned(fromByteOffset: o, as: UInt16.self)) }
    static func u64(_ b: UnsafeRawBufferPointer, _ o: Int) -> UInt64 { UInt64(littleEndian: b.loadUnaligned(fromByteOffset: o, as: UInt64.self)) }
    static func u32(_ b: [UInt8], _ o: Int) -> UInt32 { UInt32(u16(b, o)) | UInt32(u16(b, o + 2)) << 16 }
    static func u64(_ b: [UInt8], _ o: Int) -> UInt64 { UInt64(u32(b, o)) | UInt64(u32(b, o + 4)) << 32 }
}
