import Foundation

/// An ordered map from byte strings to byte strings in memory, sorted as LMDB sorts keys by
/// default (`memcmp` over the shorter length, then the shorter key first): one table of
/// ``MemoryTables``.
///
/// Entries are kept in leaves of at most ``leafCapacity`` sorted entries, the leaves in key
/// order (a B-tree of two levels): finding a key is two binary searches, and an insert moves
/// at most one leaf's entries, so a table of millions of rows stays cheap to grow in any order.
struct OrderedTable {
    static let leafCapacity = 256

    struct Leaf {
        var keys: [[UInt8]]
        var values: [[UInt8]]
    }

    /// Non-empty leaves in key order; every key of a leaf sorts before every key of the next.
    private(set) var leaves: [Leaf] = []

    /// The number of entries.
    private(set) var count = 0

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

    /// The index of the leaf that holds `key` or would hold it: the last leaf whose first key
    /// is ≤ `key` (0 when `key` sorts before every leaf).
    private func leafIndex(_ key: [UInt8]) -> Int {
        var low = 0
        var high = leaves.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if Self.compare(leaves[mid].keys[0], key) <= 0 { low = mid } else { high = mid - 1 }
        }
        return low
    }

    /// The first index in `keys` whose key is ≥ `key`, and whether it is equal.
    private static func lowerBound(_ keys: [[UInt8]], _ key: [UInt8]) -> (index: Int, found: Bool) {
        var low = 0
        var high = keys.count
        while low < high {
            let mid = (low + high) / 2
            if compare(keys[mid], key) < 0 { low = mid + 1 } else { high = mid }
        }
        return (low, low < keys.count && compare(keys[low], key) == 0)
    }

    /// The position of `key`: its leaf, its index in the leaf (where it is or would go) and
    /// whether it is there. Nil when the table is empty.
    private func locate(_ key: [UInt8]) -> (leaf: Int, index: Int, found: Bool)? {
        guard !leaves.isEmpty else { return nil }
        let l = leafIndex(key)
        let (i, found) = Self.lowerBound(leaves[l].keys, key)
        return (l, i, found)
    }

    /// The value stored under `key`.
    func value(_ key: [UInt8]) -> [UInt8]? {
        guard let (l, i, found) = locate(key), found else { return nil }
        return leaves[l].values[i]
    }

    /// The last key, if any.
    var lastKey: [UInt8]? { leaves.last?.keys.last }

    /// Stores `value` under `key`; returns the value it replaced.
    @discardableResult
    mutating func set(_ key: [UInt8], _ value: [UInt8]) -> [UInt8]? {
        guard let (l, i, found) = locate(key) else {
            leaves = [Leaf(keys: [key], values: [value])]
            count = 1
            return nil
        }
        if found {
            let old = leaves[l].values[i]
            leaves[l].values[i] = value
            return old
        }
        leaves[l].keys.insert(key, at: i)
        leaves[l].values.insert(value, at: i)
        count += 1
        if leaves[l].keys.count > Self.leafCapacity {
            let half = leaves[l].keys.count / 2
            let right = Leaf(keys: Array(leaves[l].keys[half...]), values: Array(leaves[l].values[half...]))
            leaves[l].keys.removeSubrange(half...)
            leaves[l].values.removeSubrange(half...)
            leaves.insert(right, at: l + 1)
        }
        return nil
    }

    /// Removes `key`; returns the value it had.
    @discardableResult
    mutating func remove(_ key: [UInt8]) -> [UInt8]? {
        guard let (l, i, found) = locate(key), found else { return nil }
        leaves[l].keys.remove(at: i)
        let old = leaves[l].values.remove(at: i)
        count -= 1
        if leaves[l].keys.isEmpty { leaves.remove(at: l) }
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
            i = leaves[l].keys.count - 1
        } else {
            l = 0
            i = 0
        }
        if reverse {
            while l >= 0 {
                let leaf = leaves[l]
                while i >= 0 {
                    let go = try leaf.keys[i].withUnsafeBytes { k in try leaf.values[i].withUnsafeBytes { v in try body(k, v) } }
                    if !go { return }
                    i -= 1
                }
                l -= 1
                if l >= 0 { i = leaves[l].keys.count - 1 }
            }
        } else {
            while l < leaves.count {
                let leaf = leaves[l]
                while i < leaf.keys.count {
                    let go = try leaf.keys[i].withUnsafeBytes { k in try leaf.values[i].withUnsafeBytes { v in try body(k, v) } }
                    if !go { return }
                    i += 1
                }
                l += 1
                i = 0
            }
        }
    }
}
