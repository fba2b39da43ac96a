import Foundation

/// An ordered map from byte strings to byte strings in memory, sorted as LMDB sorts keys by
/// default (`memcmp` over the shorter length, then the shorter key first): one table of
/// ``MemoryTables``.
///
/// Values live in a hash map by key, so a lookup or the replacement of an existing key (most
/// of what the fold does: an upsert of a row the collection holds) costs one hash, not a
/// search. The keys are also kept in order for walks, in leaves of at most ``leafCapacity``
/// sorted keys (a B-tree of two levels): only inserting or removing a key searches them, and
/// an insert moves at most one leaf's keys, so a table of millions of rows grows cheaply in
/// any order.
struct OrderedTable {
    static let leafCapacity = 256

    /// A key hashed and compared by its bytes in one block.
    struct Key: Hashable {
        var bytes: [UInt8]

        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }

        static func == (a: Key, b: Key) -> Bool {
            a.bytes.count == b.bytes.count && OrderedTable.compare(a.bytes, b.bytes) == 0
        }
    }

    private var values: [Key: [UInt8]] = [:]
    /// The key last found by ``value(_:)`` and where: the fold reads a row and then replaces
    /// it, and the replacement then needs no second hash lookup. Cleared when a key is added
    /// or removed (which can move entries).
    private var lastFound: (key: [UInt8], index: Dictionary<Key, [UInt8]>.Index)?
    /// Non-empty leaves of keys in order; every key of a leaf sorts before every key of the next.
    private(set) var leaves: [[[UInt8]]] = []

    /// The number of entries.
    var count: Int { values.count }

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
    private func leafIndex(_ key: UnsafeRawBufferPointer) -> Int {
        leaves.withUnsafeBufferPointer { leaves in
            var low = 0
            var high = leaves.count - 1
            while low < high {
                let mid = (low + high + 1) / 2
                if leaves[mid][0].withUnsafeBytes({ Self.compare($0, key) }) <= 0 { low = mid } else { high = mid - 1 }
            }
            return low
        }
    }

    /// The first index in `keys` whose key is ≥ `key`, and whether it is equal.
    private static func lowerBound(_ keys: [[UInt8]], _ key: UnsafeRawBufferPointer) -> (index: Int, found: Bool) {
        keys.withUnsafeBufferPointer { keys in
            var low = 0
            var high = keys.count
            while low < high {
                let mid = (low + high) / 2
                if keys[mid].withUnsafeBytes({ compare($0, key) }) < 0 { low = mid + 1 } else { high = mid }
            }
            return (low, low < keys.count && keys[low].withUnsafeBytes { compare($0, key) } == 0)
        }
    }

    /// The position of `key` among the ordered keys: its leaf, its index in the leaf (where
    /// it is or would go) and whether it is there. Nil when the table is empty.
    private func locate(_ key: [UInt8]) -> (leaf: Int, index: Int, found: Bool)? {
        guard !leaves.isEmpty else { return nil }
        return key.withUnsafeBytes { key in
            let l = leafIndex(key)
            let (i, found) = Self.lowerBound(leaves[l], key)
            return (l, i, found)
        }
    }

    /// The value stored under `key`.
    mutating func value(_ key: [UInt8]) -> [UInt8]? {
        guard let index = values.index(forKey: Key(bytes: key)) else { return nil }
        lastFound = (key, index)
        return values.values[index]
    }

    /// The last key, if any.
    var lastKey: [UInt8]? { leaves.last?.last }

    /// Stores `value` under `key`; returns the value it replaced.
    @discardableResult
    mutating func set(_ key: [UInt8], _ value: [UInt8]) -> [UInt8]? {
        if let last = lastFound, last.key.count == key.count, Self.compare(last.key, key) == 0 {
            let old = values.values[last.index]
            values.values[last.index] = value
            return old
        }
        if let old = values.updateValue(value, forKey: Key(bytes: key)) { return old }
        lastFound = nil
        guard let (l, i, _) = locate(key) else {
            leaves = [[key]]
            return nil
        }
        leaves[l].insert(key, at: i)
        if leaves[l].count > Self.leafCapacity {
            let half = leaves[l].count / 2
            let right = Array(leaves[l][half...])
            leaves[l].removeSubrange(half...)
            leaves.insert(right, at: l + 1)
        }
        return nil
    }

    /// Removes `key`; returns the value it had.
    @discardableResult
    mutating func remove(_ key: [UInt8]) -> [UInt8]? {
        guard let old = values.removeValue(forKey: Key(bytes: key)) else { return nil }
        lastFound = nil
        if let (l, i, found) = locate(key), found {
            leaves[l].remove(at: i)
            if leaves[l].isEmpty { leaves.remove(at: l) }
        }
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
        func visit(_ key: [UInt8]) throws -> Bool {
            guard let value = values[Key(bytes: key)] else {
                preconditionFailure("OrderedTable: an ordered key without a value")
            }
            return try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try body(k, v) } }
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
            for key in leaf {
                if let value = values[Key(bytes: key)] { all.append((key, value)) }
            }
        }
        return all
    }
}
