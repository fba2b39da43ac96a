import Foundation

/// An ordered map from byte strings to byte strings in memory, sorted as LMDB sorts keys by
/// default (`memcmp` over the shorter length, then the shorter key first): one table of
/// ``MemoryTables``.
///
/// Entries live in two arrays (keys, values) at a stable index; a hash index over them
/// (``ByteHashIndex``: open addressing, each slot holding part of the key's hash) finds a key
/// with one probe of a flat array and one key comparison, so a lookup or the replacement of
/// an existing key (most of what the fold does: an upsert of a row the collection holds)
/// costs one hash of the key's bytes, not a search. The entries are also kept in order for
/// walks, in leaves of at most ``leafCapacity`` keys (a B-tree of two levels): only
/// inserting or removing a key searches them, and an insert moves at most one leaf's
/// entries, so a table of millions of rows grows cheaply in any order.
///
/// Before issue 8's W5 round the values were a `Dictionary` keyed by the key's array: a
/// SipHash per lookup, and each probe of a wrong bucket compared against another key's heap
/// buffer (a cache miss); that was 19% of a 1,000,000-record `replay` (docs/performance.md, W5).
struct OrderedTable {
    static let leafCapacity = 256

    /// Entry `i`'s key and value; a removed entry's index is in `free` (and its arrays empty).
    private var keys: [[UInt8]] = []
    private var values: [[UInt8]] = []
    private var free: [Int32] = []
    private var index = ByteHashIndex()
    /// The entry last found by ``value(_:)``: the fold reads a row and then replaces it, and
    /// the replacement then needs no second hash lookup. Cleared when an entry is removed.
    private var lastFound: Int32?
    /// Non-empty leaves of entries in key order; every key of a leaf sorts before every key of
    /// the next. Each holds its key (not only the entry index), so a search through the
    /// leaves reads each key it compares with one pointer, not two.
    private var leaves: [[Leaf]] = []

    private struct Leaf {
        let key: [UInt8]
        let entry: Int32
    }

    /// The number of entries.
    var count: Int { index.count }

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

    /// The entry holding `key`, if any.
    @inline(__always)
    private func find(_ key: UnsafeRawBufferPointer, hash: UInt64) -> Int32? {
        let keys = self.keys
        return index.find(hash: hash) { entry in
            keys[Int(entry)].withUnsafeBytes { $0.count == key.count && Self.compare($0, key) == 0 }
        }
    }

    /// The index of the leaf that holds `key` or would hold it: the last leaf whose first key
    /// is ≤ `key` (0 when `key` sorts before every leaf).
    private func leafIndex(_ key: UnsafeRawBufferPointer) -> Int {
        leaves.withUnsafeBufferPointer { leaves in
            var low = 0
            var high = leaves.count - 1
            while low < high {
                let mid = (low + high + 1) / 2
                if leaves[mid][0].key.withUnsafeBytes({ Self.compare($0, key) }) <= 0 { low = mid } else { high = mid - 1 }
            }
            return low
        }
    }

    /// The first position in `leaf` whose key is ≥ `key`, and whether it is equal.
    private func lowerBound(_ leaf: [Leaf], _ key: UnsafeRawBufferPointer) -> (index: Int, found: Bool) {
        leaf.withUnsafeBufferPointer { leaf in
            var low = 0
            var high = leaf.count
            while low < high {
                let mid = (low + high) / 2
                if leaf[mid].key.withUnsafeBytes({ Self.compare($0, key) }) < 0 { low = mid + 1 } else { high = mid }
            }
            return (low, low < leaf.count && leaf[low].key.withUnsafeBytes { Self.compare($0, key) } == 0)
        }
    }

    /// The position of `key` among the ordered keys: its leaf, its index in the leaf (where
    /// it is or would go) and whether it is there. Nil when the table is empty.
    private func locate(_ key: [UInt8]) -> (leaf: Int, index: Int, found: Bool)? {
        guard !leaves.isEmpty else { return nil }
        return key.withUnsafeBytes { key in
            let l = leafIndex(key)
            let (i, found) = lowerBound(leaves[l], key)
            return (l, i, found)
        }
    }

    /// The value stored under `key`.
    mutating func value(_ key: [UInt8]) -> [UInt8]? {
        let hash = key.withUnsafeBytes { ByteHashIndex.hash($0) }
        guard let entry = key.withUnsafeBytes({ find($0, hash: hash) }) else { return nil }
        lastFound = entry
        return values[Int(entry)]
    }

    /// The last key, if any.
    var lastKey: [UInt8]? { leaves.last?.last?.key }

    /// Stores `value` under `key`; returns the value it replaced.
    @discardableResult
    mutating func set(_ key: [UInt8], _ value: [UInt8]) -> [UInt8]? {
        if let last = lastFound, Self.compare(keys[Int(last)], key) == 0 {
            return replace(Int(last), value)
        }
        let hash = key.withUnsafeBytes { ByteHashIndex.hash($0) }
        if let entry = key.withUnsafeBytes({ find($0, hash: hash) }) {
            return replace(Int(entry), value)
        }
        let entry: Int32
        if let reused = free.popLast() {
            entry = reused
            keys[Int(entry)] = key
            values[Int(entry)] = value
        } else {
            precondition(keys.count < Int(Int32.max), "OrderedTable holds at most 2^31 - 1 entries")
            entry = Int32(keys.count)
            keys.append(key)
            values.append(value)
        }
        index.insert(entry, hash: hash)
        guard let (l, i, _) = locate(key) else {
            leaves = [[Leaf(key: key, entry: entry)]]
            return nil
        }
        leaves[l].insert(Leaf(key: key, entry: entry), at: i)
        if leaves[l].count > Self.leafCapacity {
            let half = leaves[l].count / 2
            let right = Array(leaves[l][half...])
            leaves[l].removeSubrange(half...)
            leaves.insert(right, at: l + 1)
        }
        return nil
    }

    @inline(__always)
    private mutating func replace(_ entry: Int, _ value: [UInt8]) -> [UInt8] {
        let old = values[entry]
        values[entry] = value
        return old
    }

    /// Removes `key`; returns the value it had.
    @discardableResult
    mutating func remove(_ key: [UInt8]) -> [UInt8]? {
        let hash = key.withUnsafeBytes { ByteHashIndex.hash($0) }
        guard let entry = key.withUnsafeBytes({ find($0, hash: hash) }) else { return nil }
        lastFound = nil
        if let (l, i, found) = locate(key), found {
            leaves[l].remove(at: i)
            if leaves[l].isEmpty { leaves.remove(at: l) }
        }
        index.remove(entry, hash: hash)
        let old = values[Int(entry)]
        keys[Int(entry)] = []
        values[Int(entry)] = []
        free.append(entry)
        return old
    }

    /// Walks the entries in key order from the smallest key ≥ `start` (nil: the first), or
    /// with `reverse` backwards from the largest key ≤ `start` (nil: the last), until `body`
    /// returns false.
    func forEach(from start: [UInt8]?, reverse: Bool, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) rethrows {
        guard !leaves.isEmpty else { return }
        var l: Int
        var i: Int
        if let start, let (leaf, index, found) = locate(start) {
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
        func visit(_ leaf: Leaf) throws -> Bool {
            try leaf.key.withUnsafeBytes { k in try values[Int(leaf.entry)].withUnsafeBytes { v in try body(k, v) } }
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

    /// Every entry in key order (the arrays are shared, not copied).
    func entries() -> [(key: [UInt8], value: [UInt8])] {
        var all: [(key: [UInt8], value: [UInt8])] = []
        all.reserveCapacity(count)
        for leaf in leaves {
            for e in leaf { all.append((e.key, values[Int(e.entry)])) }
        }
        return all
    }
}
