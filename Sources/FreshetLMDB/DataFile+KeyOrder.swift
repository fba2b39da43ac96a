internal import CLMDB
import Foundation

extension DataFile {
    /// The key order a ``Walker`` checks when its ``Walker/order`` is set: that LMDB's search
    /// (`mdb_page_search_root`, then `mdb_node_search` on each page, in mdb.c) finds every key
    /// of a tree where a walk in key order finds it.
    ///
    /// A search takes, on a branch page with children c0 … cn and separators k1 … kn (node 0's
    /// key is never compared), the child whose separator is the largest one not above the key
    /// (c0 below k1), by binary search; on a leaf, the node with the key, by binary search.
    /// It finds every key a walk in order reads when, in LMDB's default key order (`memcmp`
    /// over the shorter length, then the shorter key first, `mdb_cmp_memn`):
    /// - the keys the walk reads from the leaves, left to right, strictly increase;
    /// - on each branch page, the last key of subtree c(i−1) < k_i ≤ the first key of subtree c_i
    ///   (so the separators strictly increase, and each key lies between its child's separators);
    /// - every branch page has two nodes or more and every leaf one or more, and the pages are
    ///   plain branch (`P_BRANCH`) or leaf (`P_LEAF`) pages, no other flag set.
    ///
    /// The walk visits subtrees in order, so the last key read before a separator is the last
    /// key of the subtree before it, and the first key read after it is its subtree's first:
    /// the check remembers the previous leaf key and the one separator still waiting for the
    /// next leaf key (a subtree's first key comes before any separator inside it). The keys
    /// are remembered as bytes of the walker's ``Mapping``, never copied.
    struct KeyOrder {
        /// The last leaf key read.
        private var previous: UnsafeRawBufferPointer?
        /// A separator the next leaf key must not be below.
        private var bound: UnsafeRawBufferPointer?
        var branchPages: UInt64 = 0
        var leafPages: UInt64 = 0
        var overflowPages = 0
        private(set) var entries: UInt64 = 0

        /// Whether `a` sorts before `b` in LMDB's default key order (`mdb_cmp_memn`).
        static func precedes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
            let shared = min(a.count, b.count)
            if shared > 0, let pa = a.baseAddress, let pb = b.baseAddress {
                let c = memcmp(pa, pb, shared)
                if c != 0 { return c < 0 }
            }
            return a.count < b.count
        }

        /// The page's flags and node count are those of a plain branch or leaf page LMDB searches.
        static func checkPage(_ number: Int, flags: UInt16, nodes: Int) throws(DataFileDamage) {
            switch flags {
            case 0x01 where nodes >= 2, 0x02 where nodes >= 1: return
            default: throw DataFile.damage(number, "has flags 0x\(String(flags, radix: 16)) and \(nodes) nodes, not a branch page of 2 or more or a leaf of 1 or more")
            }
        }

        /// Separator `key` (node `node` ≥ 1 of branch page `page`), met before its child is walked:
        /// above the last key of the subtree before it; its own subtree's first key is checked later.
        mutating func separator(_ key: UnsafeRawBufferPointer, page: Int, node: Int) throws(DataFileDamage) {
            guard let previous, Self.precedes(previous, key) else {
                throw DataFile.damage(page, "node \(node)'s key is not above the last key of the subtree before it")
            }
            bound = key
        }

        /// Leaf key `key` (node `node` of leaf page `page`), in the walk's order.
        mutating func leafKey(_ key: UnsafeRawBufferPointer, page: Int, node: Int) throws(DataFileDamage) {
            if let bound {
                guard !Self.precedes(key, bound) else { throw DataFile.damage(page, "node \(node)'s key is below the separator that leads to its subtree") }
                self.bound = nil
            }
            if let previous {
                guard Self.precedes(previous, key) else { throw DataFile.damage(page, "node \(node)'s key is not above the key before it") }
            }
            previous = key
            entries += 1
        }
    }

    /// The pages of one snapshot of the file, mapped, for ``checkKeyOrder(of:)``.
    ///
    /// Made for a snapshot a read transaction holds (``Transaction/snapshotID``): LMDB keeps
    /// every page reachable from that snapshot's trees unchanged while the transaction lives,
    /// so the map shows them as the transaction's own map does, even while another process
    /// commits. The meta page of that snapshot gives the last page a tree may use.
    package final class Snapshot {
        let file: DataFile
        let meta: Meta
        let mapping: Mapping

        /// Maps `file` for the snapshot whose transaction ID is `snapshotID`; nil when neither
        /// meta page is that snapshot's any more (two commits since it began) or when the map
        /// fails.
        package init?(file: DataFile, snapshotID: Int) {
            let metas: (DataFile.Meta, DataFile.Meta)
            do {
                metas = try file.bothMetasStrict()
            } catch {
                return nil  // unreadable meta pages: the caller falls back to lookups
            }
            let (first, second) = metas
            guard let meta = [first, second].first(where: { $0.transactionID == UInt64(snapshotID) }), meta.lastPage >= 1,
                  let mapping = file.mapping(pages: meta.lastPage + 1, pageSize: meta.pageSize) else { return nil }
            self.file = file
            self.meta = meta
            self.mapping = mapping
        }

        /// ``checkKeyOrder(of:)`` of the named database `db` as `txn` (a read transaction of this
        /// snapshot) sees it (``record(of:in:)``).
        /// - Throws: ``DataFileDamage`` from ``record(of:in:)`` or ``checkKeyOrder(of:)``.
        package func checkKeyOrder(of db: Database, in txn: borrowing Transaction) throws(DataFileDamage) {
            try checkKeyOrder(of: record(of: db, in: txn))
        }

        /// The record (`MDB_db`) of the named database `db` in `txn`, a read transaction of this
        /// snapshot: read from the main tree (`mdb_get` on the unnamed database, `MAIN_DBI`), as
        /// LMDB reads it for the first lookup or cursor of `db` in a transaction.
        /// - Throws: ``DataFileDamage`` when the record cannot be read or is not 48 bytes.
        package func record(of db: Database, in txn: borrowing Transaction) throws(DataFileDamage) -> Tree {
            precondition(txn.snapshotID == Int(meta.transactionID), "a transaction of another snapshot")
            let record: [UInt8]?
            do {
                record = try txn.withValue(Database.main, key: Array(db.name.utf8)) { Array($0) }
            } catch {
                throw DataFileDamage(page: nil, "the main tree's record of \(db.name) cannot be read: \(error)")
            }
            guard let record, record.count == DataFile.treeSize else {
                throw DataFileDamage(page: nil, "the main tree holds no \(DataFile.treeSize)-byte record of \(db.name)")
            }
            return DataFile.tree(record, at: 0)
        }

        /// Checks that LMDB's search finds every key of `tree` (a named database's record in
        /// the main tree of this snapshot) where a cursor walk in key order finds it: the
        /// checks of ``DataFile/check(readingPagesInOneGo:windowLimit:)`` on each page (page
        /// numbers inside the snapshot and each reached once, nodes inside their pages,
        /// overflow runs their length, depth as the record says), the order of ``KeyOrder``,
        /// no flags on the tree (`MDB_DUPSORT`, `MDB_INTEGERKEY`, `MDB_REVERSEKEY` order keys
        /// otherwise), and the record's entry and page counts equal to what the walk counted.
        /// Reads only the mapped pages: no lookup, no copy of a key, no LMDB call, so it may run
        /// on any one thread while the transaction lives (a ``Snapshot`` is used by one thread
        /// at a time: its file notes the size it has seen).
        /// - Throws: ``DataFileDamage`` naming the first page or count that fails.
        package func checkKeyOrder(of tree: Tree) throws(DataFileDamage) {
            guard tree.flags == 0 else { throw DataFileDamage(page: tree.root, "the database has flags 0x\(String(tree.flags, radix: 16)), not LMDB's default key order") }
            var walker = Walker(file: file, meta: meta, tolerant: false)
            walker.mapping = mapping
            walker.order = KeyOrder()
            try walker.walk(tree, role: .plain, descend: false)
            guard let order = walker.order else { throw DataFileDamage(page: tree.root, "the walk lost its key order") }
            let counted = (order.entries, order.branchPages, order.leafPages, UInt64(order.overflowPages), tree.root == nil ? 0 : tree.depth)
            let recorded = (tree.entries, tree.branchPages, tree.leafPages, tree.overflowPages, tree.depth)
            guard counted == recorded else {
                throw DataFileDamage(page: tree.root, "the record says \(recorded) entries, branch, leaf and overflow pages and depth; the walk found \(counted)")
            }
        }
    }
}

extension Database {
    /// The unnamed main database (LMDB's `MAIN_DBI`, always handle 1): the records of the
    /// named databases, keyed by name.
    static let main = Database(dbi: 1, name: "")
}
