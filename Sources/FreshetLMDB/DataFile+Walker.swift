extension DataFile {
    /// What a tree's leaf values are, which decides how they are checked.
    enum Role {
        /// The main tree: a value flagged `F_SUBDATA` is a named database's tree, walked too.
        case main
        /// The free-page tree: each value is a page-number list (count, then that many pages).
        case free
        /// A named database's tree: values are opaque bytes.
        case plain
    }

    /// Walks B-trees page by page with `pread`, checking each page before using any number
    /// in it. Strict walkers throw at the first damaged page; tolerant ones note it, skip
    /// what it leads to and go on: a damaged page loses its subtree, a damaged node of a leaf
    /// (an offset, key or value outside the page, a damaged overflow run) loses that one
    /// entry, and the leaf's other nodes are still read.
    struct Walker {
        let file: DataFile
        let meta: Meta
        let tolerant: Bool
        /// Called for each leaf entry in key order: key, value, whether it is a named database.
        var onEntry: ((_ key: [UInt8], _ value: [UInt8], _ isSubDatabase: Bool) -> Void)?
        private(set) var visitedCount = 0
        /// The pages found damaged (each counted once): the page a bad reference or node is on,
        /// or the page that failed its own checks.
        private(set) var damagedPageNumbers: Set<Int> = []
        /// Leaf nodes skipped because they or their overflow pages were damaged.
        private(set) var skippedEntries = 0
        var damagedPages: Int { damagedPageNumbers.count }
        private(set) var databases: [String] = []
        private var visited: [UInt64]
        /// The file's first pages, read in one go (``DataFile/window(pages:pageSize:)``);
        /// pages and overflow headers inside it are taken from it instead of a `pread` each.
        var window: [UInt8]?
        /// Or, for a file too large for a window, the file mapped (``DataFile/mapping(pages:pageSize:)``):
        /// pages inside it are read in place.
        var mapping: DataFile.Mapping?
        /// When set, the walk also checks the keys' order (``KeyOrder``) and counts the pages
        /// and entries; it reads pages from ``mapping`` only (the keys it remembers point into it).
        var order: KeyOrder?

        init(file: DataFile, meta: Meta, tolerant: Bool) {
            self.file = file
            self.meta = meta
            self.tolerant = tolerant
            // Sized by the pages the file holds, not the meta page's last page: the file may
            // end before it, and a damaged meta page may name a last page no memory holds.
            // ``claim(_:from:)`` grows it for pages a growing file (a live writer) gained.
            self.visited = [UInt64](repeating: 0, count: min(meta.lastPage, file.size / meta.pageSize) / 64 + 1)
        }

        /// Walks the free-page tree and the main tree with every named database in it.
        mutating func walkAll() throws(DataFileDamage) {
            try walk(meta.freeTree, role: .free, descend: true)
            try walk(meta.mainTree, role: .main, descend: true)
        }

        /// Walks `tree`; with `descend`, a main tree's named databases are walked as well.
        mutating func walk(_ tree: Tree, role: Role, descend: Bool) throws(DataFileDamage) {
            guard let root = tree.root else { return }
            guard tree.depth >= 1, tree.depth <= DataFile.maxDepth else {
                throw DataFileDamage(page: root, "a tree rooted here claims depth \(tree.depth)")
            }
            try page(root, depth: tree.depth, role: role, descend: descend)
        }

        /// `count` bytes at `offset`, from ``window`` when it holds them.
        private func pageBytes(offset: Int, count: Int, page: Int) throws(DataFileDamage) -> [UInt8] {
            if let window, offset >= 0, count <= window.count - offset { return Array(window[offset ..< offset + count]) }
            if let bytes = mapping?.bytes(offset: offset, count: count) { return Array(bytes) }
            return try file.read(offset: offset, count: count, page: page)
        }

        /// Marks `page` reached (from the page `from`): damage when it is outside pages
        /// 2 ... last page, past the file's end (LMDB would read it: a `SIGBUS`) or reached before.
        private mutating func claim(_ page: Int, from: Int?) throws(DataFileDamage) {
            guard page >= 2, page <= meta.lastPage else {
                throw DataFileDamage(page: from ?? page, "refers to page \(page), outside pages 2 ... \(meta.lastPage)")
            }
            try file.requireInside(offset: page * meta.pageSize, count: meta.pageSize, page: page)
            let (word, bit) = (page / 64, UInt64(1) << UInt64(page % 64))
            if word >= visited.count { visited.append(contentsOf: repeatElement(0, count: word - visited.count + 1)) }
            guard visited[word] & bit == 0 else { throw DataFileDamage(page: from ?? page, "refers to page \(page), which another node refers to as well") }
            visited[word] |= bit
            visitedCount += 1
        }

        private mutating func page(_ number: Int, depth: Int, role: Role, descend: Bool, from: Int? = nil) throws(DataFileDamage) {
            do {
                try claim(number, from: from)
                try pageBody(number, depth: depth, role: role, descend: descend)
            } catch {
                guard tolerant else { throw error }
                damagedPageNumbers.insert(error.page ?? number)
            }
        }

        /// Checks page `number` where it lies: in the mapping, the window or a `pread` array,
        /// lent to ``pageBody(_:_:depth:role:descend:)`` (until issue 8's speed round 7 each page
        /// was copied into an array and read through bounds-checked subscripts: 296 M
        /// instructions to open W5's store).
        private mutating func pageBody(_ number: Int, depth: Int, role: Role, descend: Bool) throws(DataFileDamage) {
            let size = meta.pageSize
            if let p = mapping?.bytes(offset: number * size, count: size) {
                try pageBody(number, p, depth: depth, role: role, descend: descend)
                return
            }
            if order != nil { throw DataFile.damage(number, "lies past the mapped part of the file") }
            let bytes = try pageBytes(offset: number * size, count: size, page: number)
            var failure: DataFileDamage?
            bytes.withUnsafeBytes { p in
                do throws(DataFileDamage) {
                    try pageBody(number, p, depth: depth, role: role, descend: descend)
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
        }

        /// The checks of page `number`, whose `meta.pageSize` bytes are `p`.
        private mutating func pageBody(_ number: Int, _ p: UnsafeRawBufferPointer, depth: Int, role: Role, descend: Bool) throws(DataFileDamage) {
            let size = meta.pageSize
            precondition(p.count == size, "a page of \(p.count) bytes, not \(size)")
            guard DataFile.u64(p, 0) == UInt64(number) else { throw DataFileDamage(page: number, "holds page number \(DataFile.u64(p, 0))") }
            let flags = DataFile.u16(p, 10)
            let lower = Int(DataFile.u16(p, 12)), upper = Int(DataFile.u16(p, 14))
            guard lower >= DataFile.headerSize, lower <= upper, upper <= size, (lower - DataFile.headerSize) % 2 == 0 else {
                throw DataFile.damage(number, "has lower \(lower) and upper \(upper) in a \(size)-byte page")
            }
            let count = (lower - DataFile.headerSize) / 2
            let isBranch = flags & 0x01 != 0, isLeaf = flags & 0x02 != 0
            guard isBranch != isLeaf, flags & 0x0C == 0 else { throw DataFile.damage(number, "is neither a branch nor a leaf page (flags 0x\(String(flags, radix: 16)))") }
            if order != nil { try KeyOrder.checkPage(number, flags: flags, nodes: count) }
            if isBranch {
                order?.branchPages += 1
                guard depth > 1 else { throw DataFile.damage(number, "is a branch page where the tree's depth says leaves are") }
                guard count >= 1 else { throw DataFile.damage(number, "is a branch page without nodes") }
            } else {
                order?.leafPages += 1
                guard depth == 1 else { throw DataFile.damage(number, "is a leaf page \(depth - 1) levels above where the tree's depth says leaves are") }
                if flags & 0x20 != 0 { return }  // P_LEAF2: fixed-size keys packed after the header, no nodes
            }
            for i in 0..<count {
                do {
                    try node(i, of: p, page: number, upper: upper, isBranch: isBranch, depth: depth, role: role, descend: descend)
                } catch {
                    // Only the node's own damage arrives here: a child page counts its own.
                    guard tolerant else { throw error }
                    damagedPageNumbers.insert(error.page ?? number)
                    if !isBranch { skippedEntries += 1 }
                }
            }
        }

        /// Node `i` of page `number` (`p`): a branch node's child is walked, a leaf node's entry reported.
        private mutating func node(_ i: Int, of p: UnsafeRawBufferPointer, page number: Int, upper: Int, isBranch: Bool, depth: Int, role: Role, descend: Bool) throws(DataFileDamage) {
            let size = meta.pageSize
            let offset = Int(DataFile.u16(p, DataFile.headerSize + 2 * i))
            guard offset >= upper, offset % 2 == 0, offset + 8 <= size else {
                throw DataFile.damage(number, "node \(i) starts at \(offset), outside \(upper) ..< \(size)")
            }
            let lo = UInt64(DataFile.u16(p, offset)), hi = UInt64(DataFile.u16(p, offset + 2))
            let nodeFlags = DataFile.u16(p, offset + 4)
            let keySize = Int(DataFile.u16(p, offset + 6))
            let keyEnd = offset + 8 + keySize
            guard keyEnd <= size else { throw DataFile.damage(number, "node \(i)'s \(keySize)-byte key runs past the page end") }
            if isBranch {
                // Node 0's key is never compared (LMDB searches a branch page from node 1).
                if i > 0, order != nil { try order?.separator(UnsafeRawBufferPointer(rebasing: p[offset + 8 ..< keyEnd]), page: number, node: i) }
                let child = lo | hi << 16 | UInt64(nodeFlags) << 32
                try page(Int(clamping: child), depth: depth - 1, role: role, descend: descend, from: number)
                return
            }
            try leafNode(p, page: number, index: i, keyRange: offset + 8 ..< keyEnd, dataSize: Int(lo | hi << 16), flags: nodeFlags, role: role, descend: descend)
        }

        private mutating func leafNode(_ p: UnsafeRawBufferPointer, page number: Int, index i: Int, keyRange: Range<Int>, dataSize: Int, flags: UInt16, role: Role, descend: Bool) throws(DataFileDamage) {
            let size = meta.pageSize
            // A named database's values are opaque: unless someone asks for the entries, only
            // their bounds are checked and no bytes are copied (a store's open checks every
            // page; copying each key and value made that most of the check's cost).
            let materialize = onEntry != nil || role != .plain
            // Made only when they are read: an empty array made and freed per entry was two
            // releases for each of W5's 1.3 M entries (docs/performance.md, "Issue 8 speed
            // round 9 (reading side)").
            var overflowValue: [UInt8]?
            if flags & 0x01 != 0 {  // F_BIGDATA: the data lives on overflow pages
                guard keyRange.upperBound + 8 <= size else { throw DataFile.damage(number, "node \(i)'s overflow page number runs past the page end") }
                let first = Int(clamping: DataFile.u64(p, keyRange.upperBound))
                overflowValue = try overflow(first, bytes: dataSize, from: number, read: materialize)
            } else {
                guard keyRange.upperBound + dataSize <= size else { throw DataFile.damage(number, "node \(i)'s \(dataSize)-byte value runs past the page end") }
            }
            if order != nil { try order?.leafKey(UnsafeRawBufferPointer(rebasing: p[keyRange]), page: number, node: i) }
            let isSub = flags & 0x02 != 0
            if role == .plain || (role == .main && !isSub) {
                if isSub || flags & 0x04 != 0 { throw DataFile.damage(number, "node \(i) has flags 0x\(String(flags, radix: 16)), which a store never writes here") }
            }
            guard materialize else { return }
            let value = overflowValue ?? Array(p[keyRange.upperBound ..< keyRange.upperBound + dataSize])
            let key = Array(p[keyRange])
            switch role {
            case .main where isSub:
                guard value.count == DataFile.treeSize else { throw DataFile.damage(number, "node \(i) is a named database with a \(value.count)-byte description") }
                databases.append(String(decoding: key, as: UTF8.self))
                if descend { try walk(DataFile.tree(value, at: 0), role: .plain, descend: false) }
            case .free:
                guard value.count >= 8, value.count % 8 == 0, DataFile.u64(value, 0) <= UInt64(value.count / 8 - 1) else {
                    throw DataFile.damage(number, "node \(i) is a free-page list of \(value.count) bytes that does not hold its count")
                }
                for k in 1 ..< Int(DataFile.u64(value, 0)) + 1 where DataFile.u64(value, 8 * k) > UInt64(meta.lastPage) {
                    throw DataFile.damage(number, "node \(i) lists free page \(DataFile.u64(value, 8 * k)), past the last page \(meta.lastPage)")
                }
            case .main, .plain:
                break  // checked above
            }
            onEntry?(key, value, isSub)
        }

        /// Checks the overflow run starting at `first` for a value of `bytes` bytes and, with
        /// `read`, reads the value (otherwise returns no bytes).
        private mutating func overflow(_ first: Int, bytes: Int, from: Int, read: Bool) throws(DataFileDamage) -> [UInt8] {
            let size = meta.pageSize
            let needed = (bytes + DataFile.headerSize + size - 1) / size
            guard first >= 2, first <= meta.lastPage, needed <= meta.lastPage - first + 1 else {
                throw DataFile.damage(from, "a value of \(bytes) bytes on overflow pages from \(first) runs past the last page \(meta.lastPage)")
            }
            let head = try pageBytes(offset: first * size, count: DataFile.headerSize, page: first)
            guard DataFile.u64(head, 0) == UInt64(first), DataFile.u16(head, 10) & 0x04 != 0 else {
                throw DataFile.damage(first, "is not the overflow page a value on page \(from) refers to")
            }
            let pages = Int(DataFile.u32(head, 12))
            guard pages >= needed, pages <= meta.lastPage - first + 1 else {
                throw DataFile.damage(first, "overflow run of \(pages) pages where \(needed) ... \(meta.lastPage - first + 1) fit")
            }
            for k in 0..<pages { try claim(first + k, from: from) }
            order?.overflowPages += pages
            guard read else { return [] }
            return try file.read(offset: first * size + DataFile.headerSize, count: bytes, page: first)
        }
    }

    static func damage(_ page: Int, _ reason: String) -> DataFileDamage { DataFileDamage(page: page, reason) }
}
