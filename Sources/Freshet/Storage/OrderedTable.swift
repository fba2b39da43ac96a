import CPrefetch
import Foundation

/// An ordered map from byte strings to byte strings in memory, sorted as LMDB sorts keys by
/// default (`memcmp` over the shorter length, then the shorter key first): one table of
/// ``MemoryTables``.
///
/// Every entry's key and value sit next to each other in one byte arena (a record: the entry's
/// number, the key's length and the value's length, 4 bytes each, then the key, then the
/// value). A hash index over the entries (``ByteHashIndex``: open addressing, each 8-byte slot
/// holding part of the key's hash and the record's offset in the arena) finds a key with one probe of
/// a flat array and one look at the arena, where the value follows the key: a lookup or the
/// replacement of an existing key (most of what the fold does: an upsert of a row the
/// collection holds) costs one hash of the key's bytes and two places in memory, not a search.
/// A replaced value of the same length is overwritten in place; one of another length, or a
/// removed entry, leaves its old record behind as garbage, and the arena is rewritten without
/// it once garbage is more than half of it, so memory stays within twice the live bytes.
///
/// The entries are also kept in order for walks, in leaves of at most ``leafCapacity`` keys
/// (a B-tree of two levels): only inserting or removing a key searches them, and an insert
/// moves at most one leaf's entries, so a table of millions of rows grows cheaply in any order.
///
/// History (docs/performance.md, W5): before issue 8's W5 round the values were a
/// `Dictionary` keyed by the key's array (SipHash per lookup, 19% of a 1,000,000-record
/// `replay`); until speed round 3 each key and value was an array of its own, reached from
/// the slot through two arrays of entries, five dependent cache misses per lookup.
///
/// Bytes lent to a closure point into the arena and are valid for the call only; nothing
/// that changes the table may run inside it (the arena may move).
struct OrderedTable {
    static let leafCapacity = 256
    /// Bytes before a record's key: the entry's number, the key's length and the value's
    /// length (`UInt32` each).
    private static let header = 12

    /// The records, live and garbage.
    private var arena: [UInt8] = []
    /// Bytes of ``arena`` that no entry uses (replaced or removed records).
    private var garbage = 0
    /// Entry `i`'s record offset in ``arena``; -1 for a removed entry, whose index is in `free`.
    private var offsets: [Int] = []
    /// Per entry, a number its owner keeps with it (``link(_:)``; -1 until set): for
    /// ``MemoryTables``, the `rows` entry a `rowIndex` entry's position was last found at.
    private var links: [Int32] = []
    private var free: [Int32] = []
    private var index = ByteHashIndex()
    /// The entry last found by ``value(_:)`` or ``locate(_:)`` and its slot: the fold reads a
    /// row and then replaces it, and the replacement then needs no second hash lookup.
    /// Cleared when an entry is added or removed (slots move then).
    private var lastFound: ByteHashIndex.Found?
    /// Non-empty leaves of entries in key order; every key of a leaf sorts before every key of
    /// the next. Each holds the entry's number and its key's first 16 bytes (``Head``), so a
    /// search through the leaves compares in the leaf itself and reads a key (from the arena)
    /// only when two heads are equal.
    private var leaves: [[Leaf]] = []

    /// An entry in a leaf: 24 bytes, no reference. Until issue 8's speed round 9 it also held
    /// the key as an array of its own: an allocation per inserted entry, a retain and release
    /// per move, and a release per entry when the table was freed (docs/performance.md,
    /// "Issue 8 speed round 9 (fold inserts)").
    private struct Leaf {
        let head: Head
        let entry: Int32

        /// The entry's key compared with `key` (whose head is `head`) in LMDB's order: negative,
        /// zero or positive; the key is read from `arena` (at the entry's offset in `offsets`)
        /// only when the heads are equal.
        @inline(__always)
        func compare(_ key: UnsafeRawBufferPointer, _ head: Head, _ tables: Storage) -> Int {
            if self.head.high != head.high { return self.head.high < head.high ? -1 : 1 }
            if self.head.low != head.low { return self.head.low < head.low ? -1 : 1 }
            return OrderedTable.compare(tables.key(entry), key)
        }
    }

    /// The arena and the entries' offsets, lent for a search or a walk.
    private struct Storage {
        let arena: UnsafeRawBufferPointer
        let offsets: UnsafeBufferPointer<Int>

        /// Entry `entry`'s key (the entry exists).
        @inline(__always)
        func key(_ entry: Int32) -> UnsafeRawBufferPointer { OrderedTable.recordKey(arena, offsets[Int(entry)]) }

        /// Entry `entry`'s value (the entry exists).
        @inline(__always)
        func value(_ entry: Int32) -> UnsafeRawBufferPointer { OrderedTable.recordValue(arena, offsets[Int(entry)]) }
    }

    /// Lends the arena and the offsets to `body` (which changes nothing).
    @inline(__always)
    private func withStorage<R>(_ body: (Storage) throws -> R) rethrows -> R {
        try arena.withUnsafeBytes { a in try offsets.withUnsafeBufferPointer { o in try body(Storage(arena: a, offsets: o)) } }
    }

    /// A key's first 16 bytes as two big-endian words, zero-padded. Two keys whose heads
    /// differ compare as their heads do: the first byte that differs is within both keys, or
    /// it is a padding 0 of the shorter key against a nonzero byte of the longer one, which
    /// LMDB's order also puts after the shorter key. Equal heads need the whole keys compared.
    /// Before issue 8's speed round 3 every comparison of the search read the key itself, a
    /// cache miss per step of inserting a row (docs/performance.md, W5).
    struct Head {
        let high: UInt64
        let low: UInt64

        @inline(__always)
        init(_ key: UnsafeRawBufferPointer) {
            var words: (UInt64, UInt64) = (0, 0)
            // Two loads for a key of 16 bytes or more, else one copy of its bytes (slicing the
            // key with `prefix(16)`, a generic slice and copy, was ~70 instructions: round 9).
            if key.count >= 16 {
                words = (key.loadUnaligned(as: UInt64.self), key.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            } else if let base = key.baseAddress, !key.isEmpty {
                withUnsafeMutableBytes(of: &words) { $0.baseAddress.unsafelyUnwrapped.copyMemory(from: base, byteCount: key.count) }
            }
            high = UInt64(bigEndian: words.0)
            low = UInt64(bigEndian: words.1)
        }
    }

    /// The number of entries.
    var count: Int { index.count }

    /// Bytes the arena holds (live and garbage), for tests of its compaction.
    var arenaBytes: Int { arena.count }

    /// Compares `a` with `b` as LMDB's default key comparison does: negative, zero or positive.
    @inline(__always)
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let n = min(a.count, b.count)
        if n > 0, let pa = a.baseAddress, let pb = b.baseAddress {
            let c = memcmp(pa, pb, n)
            if c != 0 { return Int(c) }
        }
        return a.count - b.count
    }

    @inline(__always)
    static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBytes { a in b.withUnsafeBytes { b in compare(a, b) } }
    }

    // MARK: Records in the arena

    /// The key and value lengths of the record at `offset` of `arena`.
    @inline(__always)
    private static func lengths(_ arena: UnsafeRawBufferPointer, _ offset: Int) -> (key: Int, value: Int) {
        (Int(arena.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)), Int(arena.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)))
    }

    /// The entry number of the record at `offset` of `arena`.
    @inline(__always)
    private static func entry(_ arena: UnsafeRawBufferPointer, _ offset: Int) -> Int {
        Int(arena.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    private static func recordKey(_ arena: UnsafeRawBufferPointer, _ offset: Int) -> UnsafeRawBufferPointer {
        let (k, _) = lengths(arena, offset)
        return UnsafeRawBufferPointer(rebasing: arena[(offset + header)..<(offset + header + k)])
    }

    @inline(__always)
    private static func recordValue(_ arena: UnsafeRawBufferPointer, _ offset: Int) -> UnsafeRawBufferPointer {
        let (k, v) = lengths(arena, offset)
        let start = offset + header + k
        return UnsafeRawBufferPointer(rebasing: arena[start..<(start + v)])
    }

    /// Appends a record of entry `entry` for `key` and a value of `count` bytes that `fill`
    /// writes in place; returns its offset. The record is made in one step (it was five
    /// appends, each checking the arena's capacity and uniqueness).
    private mutating func appendRecord(_ entry: Int32, _ key: UnsafeRawBufferPointer, count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) -> Int {
        // A record's value comes from a log record (less than 4 GiB) or the fold's own keys.
        precondition(key.count <= Int(UInt32.max) && count <= Int(UInt32.max), "OrderedTable: a key or value of 4 GiB or more")
        let offset = arena.count
        let size = Self.header + key.count + count
        precondition(UInt64(offset) + UInt64(size) <= ByteHashIndex.maxPayload, "OrderedTable: an arena of 1 TiB")
        arena.append(contentsOf: repeatElement(0, count: size))
        arena.withUnsafeMutableBytes { a in
            a.storeBytes(of: UInt32(entry), toByteOffset: offset, as: UInt32.self)
            a.storeBytes(of: UInt32(key.count), toByteOffset: offset + 4, as: UInt32.self)
            a.storeBytes(of: UInt32(count), toByteOffset: offset + 8, as: UInt32.self)
            let keyStart = offset + Self.header
            UnsafeMutableRawBufferPointer(rebasing: a[keyStart..<(keyStart + key.count)]).copyMemory(from: key)
            fill(UnsafeMutableRawBufferPointer(rebasing: a[(keyStart + key.count)..<(offset + size)]))
        }
        return offset
    }

    private func recordSize(at offset: Int) -> Int {
        arena.withUnsafeBytes { a in
            let (k, v) = Self.lengths(a, offset)
            return Self.header + k + v
        }
    }

    /// Rewrites the arena without garbage once garbage is more than half of it (and more
    /// than a page): offsets change, entry numbers do not.
    private mutating func compactIfWasteful() {
        guard garbage > 4096, garbage * 2 > arena.count else { return }
        var packed: [UInt8] = []
        packed.reserveCapacity(arena.count - garbage)
        var moved = offsets
        let old = arena
        old.withUnsafeBytes { a in
            for e in moved.indices where moved[e] >= 0 {
                let start = moved[e]
                let (k, v) = Self.lengths(a, start)
                moved[e] = packed.count
                packed.append(contentsOf: UnsafeRawBufferPointer(rebasing: a[start..<(start + Self.header + k + v)]))
            }
            // A payload is an offset in the old arena, whose record names the entry.
            index.rewritePayloads { UInt64(moved[Self.entry(a, Int($0))]) }
            if let found = lastFound { lastFound = ByteHashIndex.Found(payload: UInt64(moved[Self.entry(a, Int(found.payload))]), slot: found.slot) }
        }
        arena = packed
        garbage = 0
        offsets = moved
    }

    // MARK: Lookup

    /// The entry holding `key`, if any.
    @inline(__always)
    private func find(_ key: UnsafeRawBufferPointer, hash: UInt64) -> ByteHashIndex.Found? {
        arena.withUnsafeBytes { arena in
            index.find(hash: hash) { offset in
                let stored = Self.recordKey(arena, Int(offset))
                return stored.count == key.count && Self.compare(stored, key) == 0
            }
        }
    }

    /// Finds `key` and remembers it for a following ``set(_:_:)``; returns where its record
    /// is, for ``withValue(at:_:)``.
    mutating func locate(_ key: [UInt8]) -> Int? {
        key.withUnsafeBytes { locate(bytes: $0)?.offset }
    }

    /// ``locate(_:)`` for a key lent as bytes; also returns the entry's number (for ``link(_:)``).
    mutating func locate(bytes key: UnsafeRawBufferPointer) -> (entry: Int, offset: Int)? {
        locate(bytes: key, hash: ByteHashIndex.hash(key))
    }

    /// ``locate(bytes:)`` with the key's hash (``ByteHashIndex/hash(_:)`` of `key`) computed
    /// already: the log tools' reading thread hashes each record's `rowIndex` key (``FoldChunk/Upsert``).
    @inline(__always)
    mutating func locate(bytes key: UnsafeRawBufferPointer, hash: UInt64) -> (entry: Int, offset: Int)? {
        assert(hash == ByteHashIndex.hash(key), "OrderedTable.locate: a hash that is not the key's")
        guard let found = find(key, hash: hash) else { return nil }
        lastFound = found
        let offset = Int(found.payload)
        return (arena.withUnsafeBytes { Self.entry($0, offset) }, offset)
    }

    // MARK: Prefetching (hints only)

    /// Asks the CPU for the hash slot of a key whose hash is `hash` (``ByteHashIndex/prefetch(hash:)``).
    /// Mutating only so that a call through ``MemoryTables``'s pointer does not copy the table.
    @inline(__always)
    mutating func prefetchSlot(hash: UInt64) { index.prefetch(hash: hash) }

    /// The record a slot with `hash`'s tag names, guessed (``ByteHashIndex/guess(hash:)``): its
    /// offset, or nil when no slot near the key's home holds the tag. Never out of the arena.
    @inline(__always)
    private func guessedRecord(hash: UInt64) -> Int? {
        guard let payload = index.guess(hash: hash), payload < UInt64(arena.count) else { return nil }
        return Int(payload)
    }

    /// Asks the CPU for the first `lines` cache lines of the record at `offset` (a hint: a
    /// line past the arena's end is allowed, a prefetch never faults).
    @inline(__always)
    private func prefetchRecord(at offset: Int, lines: Int) {
        arena.withUnsafeBytes { a in
            let start = a.baseAddress.unsafelyUnwrapped + offset
            for line in 0..<lines { freshet_prefetch(start + line * 64) }
        }
    }

    /// Asks the CPU for the record the slot of `hash` names, once that slot is in cache
    /// (after ``prefetchSlot(hash:)``).
    @inline(__always)
    mutating func prefetchRecord(hash: UInt64, lines: Int) {
        guard let offset = guessedRecord(hash: hash) else { return }
        prefetchRecord(at: offset, lines: lines)
    }

    /// The link (``link(_:)``) of the entry whose record the slot of `hash` names, guessed,
    /// once slot and record are in cache; nil when there is none to follow.
    @inline(__always)
    mutating func guessedLink(hash: UInt64) -> Int32? {
        guard let offset = guessedRecord(hash: hash), offset + Self.header <= arena.count else { return nil }
        let entry = arena.withUnsafeBytes { Self.entry($0, offset) }
        guard entry < links.count else { return nil }
        let link = links[entry]
        return link >= 0 ? link : nil
    }

    /// Asks the CPU for the first `lines` cache lines of entry `entry`'s record, if it exists.
    @inline(__always)
    mutating func prefetchEntry(_ entry: Int32, lines: Int) {
        guard Int(entry) < offsets.count else { return }
        let offset = offsets[Int(entry)]
        guard offset >= 0 else { return }
        prefetchRecord(at: offset, lines: lines)
    }

    // MARK: Links between tables

    /// The number kept with entry `entry` (from ``locate(bytes:)``), -1 when none was set since
    /// the entry was made.
    func link(_ entry: Int) -> Int32 { links[entry] }

    /// Keeps `link` with entry `entry` (from ``locate(bytes:)``, no entry added or removed since).
    mutating func setLink(_ entry: Int, _ link: Int32) { links[entry] = link }

    /// Where entry `entry`'s record is when the entry exists and its key is `prefix` followed
    /// by `suffix` as 8 big-endian bytes; else nil. A link may name an entry removed (and its
    /// number reused) since it was kept: comparing the key tells.
    func offset(ofEntry entry: Int32, ifKeyIs prefix: UnsafeRawBufferPointer, _ suffix: UInt64) -> Int? {
        guard entry >= 0, Int(entry) < offsets.count else { return nil }
        let offset = offsets[Int(entry)]
        guard offset >= 0 else { return nil }
        let matches = arena.withUnsafeBytes { a in
            let key = Self.recordKey(a, offset)
            return key.count == prefix.count + 8
                && Self.compare(UnsafeRawBufferPointer(rebasing: key[..<prefix.count]), prefix) == 0
                && UInt64(bigEndian: key.loadUnaligned(fromByteOffset: prefix.count, as: UInt64.self)) == suffix
        }
        return matches ? offset : nil
    }

    /// Lends the value of the record at `offset` (from ``locate(_:)``, with no change since).
    func withValue<R>(at offset: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try arena.withUnsafeBytes { try body(Self.recordValue($0, offset)) }
    }

    /// A copy of the value stored under `key`.
    mutating func value(_ key: [UInt8]) -> [UInt8]? {
        guard let offset = locate(key) else { return nil }
        return withValue(at: offset) { Array($0) }
    }

    // MARK: Ordered leaves

    /// The index of the leaf that holds `key` or would hold it: the last leaf whose first key
    /// is ≤ `key` (0 when `key` sorts before every leaf).
    private func leafIndex(_ key: UnsafeRawBufferPointer, _ head: Head, _ tables: Storage) -> Int {
        leaves.withUnsafeBufferPointer { leaves in
            var low = 0
            var high = leaves.count - 1
            while low < high {
                let mid = (low + high + 1) / 2
                if leaves[mid][0].compare(key, head, tables) <= 0 { low = mid } else { high = mid - 1 }
            }
            return low
        }
    }

    /// The first position in `leaf` whose key is ≥ `key`, and whether it is equal.
    private func lowerBound(_ leaf: [Leaf], _ key: UnsafeRawBufferPointer, _ head: Head, _ tables: Storage) -> (index: Int, found: Bool) {
        leaf.withUnsafeBufferPointer { leaf in
            var low = 0
            var high = leaf.count
            while low < high {
                let mid = (low + high) / 2
                if leaf[mid].compare(key, head, tables) < 0 { low = mid + 1 } else { high = mid }
            }
            return (low, low < leaf.count && leaf[low].compare(key, head, tables) == 0)
        }
    }

    /// The position of `key` among the ordered keys: its leaf, its index in the leaf (where
    /// it is or would go) and whether it is there. Nil when the table is empty.
    private func position(_ key: UnsafeRawBufferPointer) -> (leaf: Int, index: Int, found: Bool)? {
        guard !leaves.isEmpty else { return nil }
        return withStorage { tables in
            let head = Head(key)
            let l = leafIndex(key, head, tables)
            let (i, found) = lowerBound(leaves[l], key, head, tables)
            return (l, i, found)
        }
    }

    /// The last key, if any.
    var lastKey: [UInt8]? {
        guard let last = leaves.last?.last else { return nil }
        return withStorage { Array($0.key(last.entry)) }
    }

    // MARK: Changes

    /// Stores `value` under `key`; returns the value it replaced.
    @discardableResult
    mutating func set(_ key: [UInt8], _ value: [UInt8]) -> [UInt8]? {
        value.withUnsafeBytes { set(key, bytes: $0) }
    }

    /// Stores a copy of `value` under `key`; returns the value it replaced.
    @discardableResult
    mutating func set(_ key: [UInt8], bytes value: UnsafeRawBufferPointer) -> [UInt8]? {
        set(key, reserving: value.count) { $0.copyMemory(from: value) }
    }

    /// Stores under `key` a value of `count` bytes that `fill` writes in place (all of them,
    /// without keeping the buffer), straight into the arena; returns the value it replaced.
    @discardableResult
    mutating func set(_ key: [UInt8], reserving count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) -> [UInt8]? {
        key.withUnsafeBytes { set(bytes: $0, reserving: count, fill).old }
    }

    /// ``set(_:reserving:_:)`` for a key lent as bytes (not bytes of this table), whose hash
    /// (``ByteHashIndex/hash(_:)`` of `key`) may be given when known: returns the entry's
    /// number and the value it replaced, nil when the entry is new (for ``removeEntry(_:)``).
    /// A new key costs one hash lookup, one search of the leaves and no allocation but the
    /// amortized growth of the arena, the index and a leaf (docs/performance.md, "Issue 8
    /// speed round 9 (fold inserts)").
    @discardableResult
    mutating func set(bytes key: UnsafeRawBufferPointer, hash known: UInt64? = nil, reserving count: Int,
                      _ fill: (UnsafeMutableRawBufferPointer) -> Void) -> (entry: Int32, old: [UInt8]?) {
        assert(known == nil || known == ByteHashIndex.hash(key), "OrderedTable.set: a hash that is not the key's")
        if let last = lastFound, arena.withUnsafeBytes({ Self.compare(Self.recordKey($0, Int(last.payload)), key) == 0 }) {
            return replace(last, key, count: count, fill)
        }
        let hash = known ?? ByteHashIndex.hash(key)
        if let found = find(key, hash: hash) {
            return replace(found, key, count: count, fill)
        }
        let entry: Int32
        if let reused = free.popLast() {
            entry = reused
            links[Int(entry)] = -1
        } else {
            precondition(offsets.count < Int(Int32.max), "OrderedTable holds at most 2^31 - 1 entries")
            entry = Int32(offsets.count)
            offsets.append(-1)
            links.append(-1)
        }
        let offset = appendRecord(entry, key, count: count, fill)
        offsets[Int(entry)] = offset
        lastFound = nil
        index.insert(UInt64(offset), hash: hash)
        let leaf = Leaf(head: Head(key), entry: entry)
        guard let (l, i, _) = position(key) else {
            leaves = [[leaf]]
            return (entry, nil)
        }
        leaves[l].insert(leaf, at: i)
        if leaves[l].count > Self.leafCapacity {
            let half = leaves[l].count / 2
            let right = Array(leaves[l][half...])
            leaves[l].removeSubrange(half...)
            leaves.insert(right, at: l + 1)
        }
        return (entry, nil)
    }

    /// Replaces the value of the entry `found`, whose key is `key` (not bytes of this table),
    /// with `count` bytes that `fill` writes: in place when the length is the same, else in a
    /// new record (the old one becomes garbage). Returns the entry's number and the old value.
    private mutating func replace(_ found: ByteHashIndex.Found, _ key: UnsafeRawBufferPointer, count: Int,
                                  _ fill: (UnsafeMutableRawBufferPointer) -> Void) -> (entry: Int32, old: [UInt8]) {
        let offset = Int(found.payload)
        let old = withValue(at: offset) { Array($0) }
        let entry = arena.withUnsafeBytes { Self.entry($0, offset) }
        if old.count == count {
            let start = offset + Self.header + key.count
            arena.withUnsafeMutableBytes { a in fill(UnsafeMutableRawBufferPointer(rebasing: a[start..<(start + count)])) }
            return (Int32(entry), old)
        }
        garbage += recordSize(at: offset)
        let moved = appendRecord(Int32(entry), key, count: count, fill)
        offsets[entry] = moved
        index.setPayload(UInt64(moved), slot: found.slot)
        lastFound = ByteHashIndex.Found(payload: UInt64(moved), slot: found.slot)
        compactIfWasteful()
        return (Int32(entry), old)
    }

    /// Removes entry `entry` (from ``set(bytes:hash:reserving:_:)``, which made it, with no
    /// entry added or removed since): an undone insert.
    mutating func removeEntry(_ entry: Int32) {
        let key = withStorage { Array($0.key(entry)) }
        remove(key)
    }

    /// Removes `key`; returns the value it had.
    @discardableResult
    mutating func remove(_ key: [UInt8]) -> [UInt8]? {
        let hash = key.withUnsafeBytes { ByteHashIndex.hash($0) }
        guard let found = key.withUnsafeBytes({ find($0, hash: hash) }) else { return nil }
        lastFound = nil
        if let (l, i, present) = key.withUnsafeBytes({ position($0) }), present {
            leaves[l].remove(at: i)
            if leaves[l].isEmpty { leaves.remove(at: l) }
        }
        index.remove(found.payload, hash: hash)
        let offset = Int(found.payload)
        let old = withValue(at: offset) { Array($0) }
        let entry = arena.withUnsafeBytes { Self.entry($0, offset) }
        garbage += recordSize(at: offset)
        offsets[entry] = -1
        free.append(Int32(entry))
        compactIfWasteful()
        return old
    }

    // MARK: Walks

    /// Walks the entries in key order from the smallest key ≥ `start` (nil: the first), or
    /// with `reverse` backwards from the largest key ≤ `start` (nil: the last), until `body`
    /// returns false.
    func forEach(from start: [UInt8]?, reverse: Bool, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) rethrows {
        if let start {
            try start.withUnsafeBytes { try forEach(fromBytes: $0, reverse: reverse, body) }
        } else {
            try forEach(fromBytes: nil, reverse: reverse, body)
        }
    }

    /// ``forEach(from:reverse:_:)`` from a key lent as bytes.
    func forEach(fromBytes start: UnsafeRawBufferPointer?, reverse: Bool, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) rethrows {
        guard !leaves.isEmpty else { return }
        var l: Int
        var i: Int
        if let start, let (leaf, index, found) = position(start) {
            l = leaf
            i = index
            if reverse, !found { i -= 1 } // the largest key < start
        } else if reverse {
            l = leaves.count - 1
            i = leaves[l].count - 1
        } else {
            l = 0
            i = 0
        }
        try withStorage { tables in
            func visit(_ leaf: Leaf) throws -> Bool {
                try body(tables.key(leaf.entry), tables.value(leaf.entry))
            }
            if reverse {
                while l >= 0 {
                    let leaf = leaves[l]
                    while i >= 0 {
                        if try !visit(leaf[i]) { return }
                        i -= 1
                    }
                    l -= 1
                    if l >= 0 { i = leaves[l].count - 1 }
                }
            } else {
                while l < leaves.count {
                    let leaf = leaves[l]
                    while i < leaf.count {
                        if try !visit(leaf[i]) { return }
                        i += 1
                    }
                    l += 1
                    i = 0
                }
            }
        }
    }

    /// Every entry in key order (keys and values copied out of the arena).
    func entries() -> [(key: [UInt8], value: [UInt8])] {
        var all: [(key: [UInt8], value: [UInt8])] = []
        all.reserveCapacity(count)
        withStorage { tables in
            for leaf in leaves {
                for e in leaf { all.append((Array(tables.key(e.entry)), Array(tables.value(e.entry)))) }
            }
        }
        return all
    }
}
