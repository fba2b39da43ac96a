import CPrefetch

/// A hash index from byte-string keys to payloads (``OrderedTable``: where an entry's record is
/// in its arena), for ``OrderedTable``: open addressing with linear probing over one flat
/// array of 8-byte slots, each holding the upper 24 bits of the key's hash and a payload of
/// up to 40 bits, so a probe compares hashes in the array and looks at a stored key only when
/// they match, straight from the slot. At most half the slots are used; a removal shifts the
/// following slots back (no tombstones), so lookups stay short after any number of removals.
///
/// The keys themselves are the caller's: ``find(hash:matches:)`` asks it whether the entry
/// with a payload holds the key looked up. The hash (``hash(_:)``) mixes 8 bytes at a time
/// with a seed chosen per process, so a log crafted to collide makes a tool slower in one
/// run, not in all.
struct ByteHashIndex {
    /// 0: empty; else `hash & 0xFFFF_FF00_0000_0000 | (payload + 1)`. Before issue 8's speed
    /// round 3 a slot held an entry number, and a lookup went from the slot to an array of
    /// entries and from there to the key and the value, each a cache miss (docs/performance.md, W5).
    private var slots: [UInt64] = Array(repeating: 0, count: 16)
    private var mask = 15
    private(set) var count = 0

    private static let seed = UInt64.random(in: UInt64.min ... UInt64.max)
    private static let tagMask: UInt64 = 0xFFFF_FF00_0000_0000
    /// The largest payload a slot holds (40 bits, less one: `payload + 1` is stored).
    static let maxPayload: UInt64 = (1 << 40) - 2

    /// What ``find(hash:matches:)`` found: the payload and the slot holding it (valid until
    /// the next insert or removal, for ``setPayload(_:slot:)``).
    struct Found {
        let payload: UInt64
        let slot: Int
    }

    /// A 64-bit hash of `bytes` (mixing as MurmurHash3's 64-bit finalizer does).
    @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 { hash(bytes, seed: seed) }

    /// ``hash(_:)`` with `seed` for the process's seed (tests compare it with a plain reading).
    @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        let n = bytes.count
        var h = seed ^ (UInt64(n) &* 0x9E37_79B9_7F4A_7C15)
        var i = 0
        while i + 8 <= n {
            h = (h ^ bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0x9E37_79B9_7F4A_7C15
            h ^= h >> 32
            i += 8
        }
        if i < n {
            // The last 1 ..< 8 bytes as a little-endian word, zero-extended. When the key has 8
            // bytes or more, one load of its last 8 shifted right gives that word (a byte at a
            // time, with its checks, was most of hashing a `rowIndex` key: round 8, reading side).
            var w: UInt64 = 0
            if n >= 8 {
                w = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)) >> (UInt64(8 - (n - i)) &* 8)
            } else {
                var shift: UInt64 = 0
                while i < n {
                    w |= UInt64(bytes[i]) << shift
                    shift += 8
                    i += 1
                }
            }
            h = (h ^ w) &* 0x9E37_79B9_7F4A_7C15
        }
        return finish(h)
    }

    /// The last mixing of ``hash(_:seed:)``: MurmurHash3's 64-bit finalizer.
    @inline(__always)
    static func finish(_ mixed: UInt64) -> UInt64 {
        var h = mixed
        h ^= h >> 33
        h &*= 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        h &*= 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        return h
    }

    @inline(__always)
    private func home(_ tag: UInt64) -> Int { Int(truncatingIfNeeded: tag >> 40) & mask }

    /// The payload stored with `hash` that `matches` accepts, if any, and its slot.
    @inline(__always)
    func find(hash: UInt64, matches: (_ payload: UInt64) -> Bool) -> Found? {
        let tag = hash & Self.tagMask
        return slots.withUnsafeBufferPointer { slots in
            var i = home(tag)
            while true {
                let s = slots[i]
                if s == 0 { return nil }
                if s & Self.tagMask == tag {
                    let payload = (s & ~Self.tagMask) &- 1
                    if matches(payload) { return Found(payload: payload, slot: i) }
                }
                i = (i &+ 1) & mask
            }
        }
    }

    /// Asks the CPU for the slot where the probe for `hash` starts (``freshet_prefetch``: a
    /// hint, it reads nothing and changes nothing). The log tools' fold asks for the slots of
    /// the records several records ahead, whose hashes the reading thread computed
    /// (docs/performance.md, "Issue 8 speed round 7 (fold side)").
    @inline(__always)
    func prefetch(hash: UInt64) {
        slots.withUnsafeBufferPointer { freshet_prefetch($0.baseAddress.unsafelyUnwrapped + home(hash & Self.tagMask)) }
    }

    /// The payload of the first of the few slots from `hash`'s home that holds its tag: a
    /// guess, with no key compared (another key may share the tag), for a prefetch only.
    @inline(__always)
    func guess(hash: UInt64) -> UInt64? {
        let tag = hash & Self.tagMask
        return slots.withUnsafeBufferPointer { slots in
            var i = home(tag)
            for _ in 0..<4 {
                let s = slots[i]
                if s == 0 { return nil }
                if s & Self.tagMask == tag { return (s & ~Self.tagMask) &- 1 }
                i = (i &+ 1) & mask
            }
            return nil
        }
    }

    /// Adds `payload` (whose key is not in the index yet) under `hash`.
    mutating func insert(_ payload: UInt64, hash: UInt64) {
        precondition(payload <= Self.maxPayload, "ByteHashIndex: payload \(payload) does not fit 40 bits")
        if (count + 1) * 2 > slots.count { grow() }
        place(hash & Self.tagMask | (payload + 1))
        count += 1
    }

    /// Replaces the payload in `slot` (from a ``Found`` with no insert or removal since).
    mutating func setPayload(_ payload: UInt64, slot: Int) {
        precondition(slots[slot] != 0 && payload <= Self.maxPayload, "ByteHashIndex.setPayload: slot \(slot) is empty or payload \(payload) too large")
        slots[slot] = slots[slot] & Self.tagMask | (payload + 1)
    }

    /// Replaces every payload `p` with `payload(p)` (at most ``maxPayload``).
    mutating func rewritePayloads(_ payload: (UInt64) -> UInt64) {
        for i in slots.indices where slots[i] != 0 {
            let new = payload((slots[i] & ~Self.tagMask) - 1)
            precondition(new <= Self.maxPayload, "ByteHashIndex: payload \(new) does not fit 40 bits")
            slots[i] = slots[i] & Self.tagMask | (new + 1)
        }
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

    /// Removes `payload`, stored under `hash`; the slots after it move back into the gap
    /// where their home allows (Knuth's algorithm R for linear probing).
    mutating func remove(_ payload: UInt64, hash: UInt64) {
        let wanted = hash & Self.tagMask | (payload + 1)
        var gap = home(wanted)
        while slots[gap] != wanted {
            precondition(slots[gap] != 0, "ByteHashIndex.remove: payload \(payload) is not in the index")
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
