/// A hash index from byte-string keys to entry numbers (`Int32`), for ``OrderedTable``: open
/// addressing with linear probing over one flat array of slots, each slot holding the upper
/// 32 bits of the key's hash and the entry number, so a probe compares hashes in the array and
/// looks at a stored key only when they match. At most half the slots are used; a removal
/// shifts the following slots back (no tombstones), so lookups stay short after any number of
/// removals.
///
/// The keys themselves are the caller's: ``find(hash:matches:)`` asks it whether an entry
/// holds the key looked up. The hash (``hash(_:)``) mixes 8 bytes at a time with a seed
/// chosen per process, so a log crafted to collide makes a tool slower in one run, not in all.
struct ByteHashIndex {
    /// 0: empty; else `hash & 0xFFFF_FFFF_0000_0000 | (entry + 1)`.
    private var slots: [UInt64] = Array(repeating: 0, count: 16)
    private var mask = 15
    private(set) var count = 0

    private static let seed = UInt64.random(in: UInt64.min ... UInt64.max)

    /// A 64-bit hash of `bytes` (mixing as MurmurHash3's 64-bit finalizer does).
    @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let n = bytes.count
        var h = seed ^ (UInt64(n) &* 0x9E37_79B9_7F4A_7C15)
        var i = 0
        while i + 8 <= n {
            h = (h ^ bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0x9E37_79B9_7F4A_7C15
            h ^= h >> 32
            i += 8
        }
        if i < n {
            var w: UInt64 = 0
            var shift: UInt64 = 0
            while i < n {
                w |= UInt64(bytes[i]) << shift
                shift += 8
                i += 1
            }
            h = (h ^ w) &* 0x9E37_79B9_7F4A_7C15
        }
        h ^= h >> 33
        h &*= 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        h &*= 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        return h
    }

    @inline(__always)
    private func home(_ tag: UInt64) -> Int { Int(truncatingIfNeeded: tag >> 32) & mask }

    /// The entry whose key `matches` accepts among those stored with `hash`, if any.
    @inline(__always)
    func find(hash: UInt64, matches: (Int32) -> Bool) -> Int32? {
        let tag = hash & 0xFFFF_FFFF_0000_0000
        return slots.withUnsafeBufferPointer { slots in
            var i = home(tag)
            while true {
                let s = slots[i]
                if s == 0 { return nil }
                if s & 0xFFFF_FFFF_0000_0000 == tag {
                    let entry = Int32(truncatingIfNeeded: s & 0xFFFF_FFFF) - 1
                    if matches(entry) { return entry }
                }
                i = (i + 1) & mask
            }
        }
    }

    /// Adds `entry` (whose key is not in the index yet) under `hash`.
    mutating func insert(_ entry: Int32, hash: UInt64) {
        if (count + 1) * 2 > slots.count { grow() }
        place(hash & 0xFFFF_FFFF_0000_0000 | UInt64(UInt32(entry) + 1))
        count += 1
    }

    private mutating func place(_ slot: UInt64) {
        var i = home(slot)
        while slots[i] != 0 { i = (i + 1) & mask }
        slots[i] = slot
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: 0, count: old.count * 2)
        mask = slots.count - 1
        for s in old where s != 0 { place(s) }
    }

    /// Removes `entry`, stored under `hash`; the slots after it move back into the gap where
    /// their home allows (Knuth's algorithm R for linear probing).
    mutating func remove(_ entry: Int32, hash: UInt64) {
        let wanted = hash & 0xFFFF_FFFF_0000_0000 | UInt64(UInt32(entry) + 1)
        var gap = home(wanted)
        while slots[gap] != wanted {
            precondition(slots[gap] != 0, "ByteHashIndex.remove: entry \(entry) is not in the index")
            gap = (gap + 1) & mask
        }
        var j = gap
        while true {
            j = (j + 1) & mask
            let s = slots[j]
            if s == 0 { break }
            let h = home(s)
            // Slot j may move to the gap unless its home lies cyclically in (gap, j].
            let stays = gap <= j ? (gap < h && h <= j) : (gap < h || h <= j)
            if !stays {
                slots[gap] = s
                gap = j
            }
        }
        slots[gap] = 0
        count -= 1
    }
}
