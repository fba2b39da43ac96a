import Foundation

/// Records read from the log in one read transaction, decoded and ready to fold as one change
/// set (``ScratchState/fold(_:)``), with the problems found while reading them.
///
/// Only the bytes of `mutationProposed` records are kept (``proposals``): they are the only
/// records the fold reads back from the log (a confirmation or rollback finds its proposal by
/// LSN). Before issue 8's speed round 3 every record's bytes travelled with it, an array per
/// record copied and freed with the chunk (docs/performance.md, W5).
struct FoldChunk: Sendable {
    /// The records, in LSN order.
    private(set) var records: [LogRecord] = []
    /// The bytes of each `mutationProposed` record among ``records``, in the same order.
    private(set) var proposals: [[UInt8]] = []
    /// Per record, what the reading thread prepared for its fold (``Upsert``), in the same order.
    private(set) var upserts: [Upsert] = []
    /// The bytes ``Upsert``s point into: per one-row upsert its `rowIndex` key, then the row as
    /// `rows` stores it. A slice from index 0 of ``upsertStorage``.
    var upsertBytes: ArraySlice<UInt8> { upsertStorage[..<upsertCount] }
    /// ``upsertBytes`` and spare room after them: its bytes from `upsertCount` on are scratch
    /// (zeros or an earlier chunk's), written through a pointer before they are counted, so
    /// a record's bytes cost one room check (``reserveUpsertBytes(_:)``), not an `append` each.
    private var upsertStorage: [UInt8] = []
    private var upsertCount = 0
    /// The collections of the one-row upserts, numbered in order of first appearance
    /// (``Upsert/collection``): each one's first record (for its name) and where its key prefix
    /// is in ``upsertBytes``, and a hash index over the prefixes.
    private(set) var collectionFirstRecords: [Int] = []
    private var collectionPrefixes: [(start: Int, count: Int)] = []
    private var collectionIndex = ByteHashIndex()
    /// The number of the last one-row upsert's collection (-1: none yet), and per collection
    /// number the collection of the one-row upsert that followed its last one (-1: none yet):
    /// the guess ``collectionNumber(prefixAt:count:record:)`` checks before the hash lookup.
    private var lastCollection = -1
    private var collectionSuccessors: [Int] = []

    /// What the reading thread derives from a row change for its fold, where the record's bytes
    /// are at hand (docs/performance.md, "Issue 8 speed round 7 (fold side)"):
    /// - `hash`: the hash (``ByteHashIndex/hash(_:)``) of the `rowIndex` key (``Keys/index(_:id:)``)
    ///   of the record's first op, 0 for none — the folding thread asks the CPU for that lookup's
    ///   memory several records ahead (``MemoryTables/prefetchIndexed(stage:index:rows:hash:)``);
    /// - for a local write of one upserted row (``Fold/applyLocalUpsert(_:bytes:record:slot:state:in:)``,
    ///   what nearly every record of a log is): the key's bytes (``upsertBytes``, from `start`,
    ///   `keyCount` bytes, of which the first `prefixCount` are ``Keys/collection(_:)``), followed by
    ///   the row as ``MaterializedState/encodeRow(_:)`` encodes it (`rowCount` bytes), and the
    ///   collection's number in the chunk (`collection`; -1: fold the record the general way).
    struct Upsert: Equatable {
        var hash: UInt64 = 0
        var start = 0
        var keyCount = 0
        var prefixCount = 0
        var rowCount = 0
        var collection = -1
    }

    /// Rows larger than this are folded the general way (not copied once more into the chunk).
    static let preparedRowLimit = 16_384
    /// What reading found before or among these records (undecodable records, missing LSNs),
    /// in log order; the fold's own problems follow them.
    var problems: [StoreProblem] = []

    init(capacity: Int = 0) {
        records.reserveCapacity(capacity)
        upserts.reserveCapacity(capacity)
    }

    /// Records with their bytes, as ``DamagedLog`` collects them.
    init(_ entries: [(record: LogRecord, bytes: [UInt8])]) {
        records.reserveCapacity(entries.count)
        upserts.reserveCapacity(entries.count)
        for entry in entries { entry.bytes.withUnsafeBytes { append(entry.record, bytes: $0) } }
    }

    var count: Int { records.count }

    /// Folded records kept to be refilled (``recycledOps()``), and the next one to take from.
    private var recycled: [LogRecord] = []
    private var nextRecycled = 0
    /// The indices in ``records`` of the row changes that hold ops (in ``recycled`` once folded):
    /// the only ones ``recycledOps()`` takes arrays from. A change whose row was left out by
    /// the decoder (``RowChangesLayout/isPreparedUpsert``) holds none, and reaching its event
    /// cost a retain and a release.
    private var withOps: [Int] = []
    private var recycledWithOps: [Int] = []

    /// Empties the chunk for the next one, keeping the arrays' capacity (``FoldPipeline/submit(_:)``
    /// hands folded chunks back this way). The records are not freed but kept (``recycledOps()``):
    /// the next records decoded into the chunk refill their ops arrays.
    mutating func removeAll() {
        recycled.removeAll(keepingCapacity: true)
        swap(&records, &recycled)
        // The two arrays take turns; the first time, the one taking the records' place is new.
        records.reserveCapacity(recycled.capacity)
        nextRecycled = 0
        recycledWithOps.removeAll(keepingCapacity: true)
        swap(&withOps, &recycledWithOps)
        proposals.removeAll(keepingCapacity: true)
        upserts.removeAll(keepingCapacity: true)
        upsertCount = 0
        collectionFirstRecords.removeAll(keepingCapacity: true)
        collectionPrefixes.removeAll(keepingCapacity: true)
        collectionIndex = ByteHashIndex()
        collectionSuccessors.removeAll(keepingCapacity: true)
        lastCollection = -1
        problems.removeAll(keepingCapacity: true)
    }

    /// Whether ``recycledOps()`` has a folded record's array left to hand out.
    var hasRecycledOps: Bool { nextRecycled < recycledWithOps.count }

    /// The ops array of a folded record of this chunk, its ops still in it, for the decoder to
    /// overwrite (``LogRecord/decode(_:expectedLSN:rows:ops:)``); an empty array when none is
    /// left or the record was no row change.
    ///
    /// A one-op record's array is its only allocation left (its JSON is a slice of a shared
    /// block, ``RowJSONBlocks``, its strings mostly inline): refilled, a record of the next chunk
    /// allocates nothing and the folded one frees nothing. Before issue 8's speed round 5 each
    /// record's array was allocated when decoded and freed when its chunk came back
    /// (docs/performance.md, W5).
    mutating func recycledOps() -> [Event.RowChanges.Op] {
        guard hasRecycledOps else { return [] }
        // The event is swapped out of the kept record (an empty row change left in its place)
        // and its array moved out of it: nothing is copied or retained, so the array stays
        // uniquely referenced and is written in place.
        var event = Event.localWrite(Event.RowChanges([]))
        swap(&event, &recycled[recycledWithOps[nextRecycled]].event)
        nextRecycled += 1
        switch consume event {
        case .changed(var changes), .localWrite(var changes):
            var ops: [Event.RowChanges.Op] = []
            swap(&ops, &changes.ops)
            return ops
        default:
            return []
        }
    }

    /// Adds `record` (moved in, not copied), keeping a copy of `bytes` (its encoding, lent by
    /// the read transaction) only for a proposal; its ``Upsert`` prepared from its event.
    mutating func append(_ record: consuming LogRecord, bytes: UnsafeRawBufferPointer) {
        if record.kind == .mutationProposed { proposals.append(Array(bytes)) }
        if record.kind == .localWrite || record.kind == .changed { withOps.append(records.count) }
        upserts.append(prepare(record, bytes: bytes))
        records.append(record)
    }

    /// Adds `record` as ``append(_:bytes:)`` does, its ``Upsert`` prepared from `layout`: where
    /// the decoder found its first op in `bytes` (``LogRecord/decode(_:expectedLSN:rows:ops:layout:)``;
    /// nil: from the event). The same ``Upsert`` and bytes, without reaching the event's `String`
    /// and `Data` (docs/performance.md, "Issue 8 speed round 8 (reading side)"). The record's
    /// ops may have been left out by the decoder when `layout` is a prepared upsert's
    /// (``RowChangesLayout/isPreparedUpsert``): the fold reads only the prepared bytes then.
    mutating func append(_ record: consuming LogRecord, bytes: UnsafeRawBufferPointer, layout: RowChangesLayout?) {
        guard let layout else { return append(record, bytes: bytes) }
        if !layout.isPreparedUpsert { withOps.append(records.count) }
        upserts.append(prepare(layout, bytes: bytes))
        records.append(record)
    }

    /// The ``Upsert`` of `record` (the one about to be appended), whose encoding is `bytes`.
    private mutating func prepare(_ record: borrowing LogRecord, bytes: UnsafeRawBufferPointer) -> Upsert {
        let changes: Event.RowChanges
        switch record.event {
        case .localWrite(let c), .changed(let c): changes = c
        default: return Upsert()
        }
        let id: String
        var row: Row?
        switch changes.ops.first {
        case .upsert(let r):
            id = r.id
            row = r
        case .delete(let deleted): id = deleted
        case nil: return Upsert()
        }
        var utf8 = id
        return utf8.withUTF8 { id in
            // The fold's own fast path takes what ``Fold/apply(lent:to:in:)`` folds through
            // ``Fold/upsert(_:state:prefix:in:)`` alone: a local write (or a change without a push
            // origin) of exactly one upserted row.
            if let row, changes.origin == nil, changes.ops.count == 1, row.json.count <= Self.preparedRowLimit {
                return row.json.withUnsafeBytes { json in put(bytes, id: UnsafeRawBufferPointer(id), json: json) }
            }
            return put(bytes, id: UnsafeRawBufferPointer(id), json: nil)
        }
    }

    /// The ``Upsert`` of the row change (about to be appended) whose encoding is `bytes` and
    /// whose first op is where `layout` says.
    private mutating func prepare(_ layout: RowChangesLayout, bytes: UnsafeRawBufferPointer) -> Upsert {
        guard layout.opCount > 0 else { return Upsert() }
        let id = UnsafeRawBufferPointer(rebasing: bytes[layout.idStart..<(layout.idStart + layout.idCount)])
        // As in ``prepare(_:bytes:)``.
        guard layout.isPreparedUpsert else {
            return put(bytes, id: id, json: nil)
        }
        return put(bytes, id: id, json: UnsafeRawBufferPointer(rebasing: bytes[layout.jsonStart..<(layout.jsonStart + layout.jsonCount)]))
    }

    /// The ``Upsert`` of a row change whose encoding is `bytes`, whose first op's ID is `id`
    /// and, when it is a one-row upsert to prepare, whose row's JSON is `json` (nil: only the
    /// key's hash is kept). The key is the prefix (``Keys/collection(_:)``: the name's length in
    /// 2 bytes, big-endian, then the name), which is bytes 20 ..< 22 + n of the record as it lies
    /// (docs/log-format.md), then the ID; the row is the ID's length as a varint
    /// (`ByteWriter.varint`), the ID, the JSON (``MaterializedState/encodeRow(_:)``). Both are
    /// written into ``upsertStorage`` after one room check; counted only for a one-row upsert.
    private mutating func put(_ bytes: UnsafeRawBufferPointer, id: UnsafeRawBufferPointer, json: UnsafeRawBufferPointer?) -> Upsert {
        guard bytes.count >= 22 else { return Upsert() }
        let end = 22 + (Int(bytes[20]) << 8 | Int(bytes[21]))
        guard bytes.count >= end else { return Upsert() }
        let prefix = UnsafeRawBufferPointer(rebasing: bytes[20..<end])
        let keyCount = prefix.count + id.count
        var varintCount = 1
        while id.count >> (7 * varintCount) != 0 { varintCount += 1 }
        let total = json.map { keyCount + varintCount + id.count + $0.count } ?? keyCount
        reserveUpsertBytes(total)
        let start = upsertCount
        // Plain pointer arithmetic: slicing a buffer per part checked its bounds each time.
        let hash = upsertStorage.withUnsafeMutableBytes { all in
            let key = all.baseAddress.unsafelyUnwrapped + start
            key.copyMemory(from: prefix.baseAddress.unsafelyUnwrapped, byteCount: prefix.count)
            if let base = id.baseAddress { (key + prefix.count).copyMemory(from: base, byteCount: id.count) }
            if let json {
                var at = key + keyCount
                var v = UInt(id.count)
                while v >= 0x80 {
                    at.storeBytes(of: UInt8(truncatingIfNeeded: v & 0x7F) | 0x80, as: UInt8.self)
                    v >>= 7
                    at += 1
                }
                at.storeBytes(of: UInt8(truncatingIfNeeded: v), as: UInt8.self)
                at += 1
                if let base = id.baseAddress { at.copyMemory(from: base, byteCount: id.count) }
                if let base = json.baseAddress { (at + id.count).copyMemory(from: base, byteCount: json.count) }
            }
            return ByteHashIndex.hash(UnsafeRawBufferPointer(start: key, count: keyCount))
        }
        guard json != nil else { return Upsert(hash: hash) }
        upsertCount += total
        let collection = collectionNumber(prefixAt: start, count: prefix.count, record: records.count)
        return Upsert(hash: hash, start: start, keyCount: keyCount, prefixCount: prefix.count, rowCount: total - keyCount, collection: collection)
    }

    /// Makes room for `count` more bytes after ``upsertBytes`` in ``upsertStorage``, at least
    /// doubling it when it grows (zero-filled: `repeatElement` appended a byte at a time).
    private mutating func reserveUpsertBytes(_ count: Int) {
        let needed = upsertCount + count
        guard needed > upsertStorage.count else { return }
        var grown = [UInt8](repeating: 0, count: max(needed, 2 * upsertStorage.count, 4096))
        let used = upsertCount
        grown.withUnsafeMutableBytes { to in
            upsertStorage.withUnsafeBytes { from in
                if used > 0 { to.baseAddress.unsafelyUnwrapped.copyMemory(from: from.baseAddress.unsafelyUnwrapped, byteCount: used) }
            }
        }
        upsertStorage = grown
    }

    /// The number of the collection whose key prefix is ``upsertBytes``[`start` ..< `start + count`]
    /// among this chunk's, numbered anew when it is the first.
    ///
    /// First guessed: the collection that followed the last one's collection the time before
    /// (``collectionSuccessors``) — the same one in a run of one collection's records, the next
    /// one when collections take turns (W5 writes its 100 in rotation) — and compared; the hash
    /// index over the prefixes only when the guess is wrong.
    private mutating func collectionNumber(prefixAt start: Int, count: Int, record: Int) -> Int {
        let last = lastCollection
        let guess = last >= 0 ? collectionSuccessors[last] : -1
        let found = upsertStorage.withUnsafeBytes { all -> Int? in
            let base = all.baseAddress.unsafelyUnwrapped
            if guess >= 0 {
                let known = collectionPrefixes[guess]
                if known.count == count, memcmp(base + known.start, base + start, count) == 0 { return guess }
            }
            let prefix = UnsafeRawBufferPointer(start: base + start, count: count)
            let hash = ByteHashIndex.hash(prefix)
            if let found = collectionIndex.find(hash: hash, matches: { payload in
                let known = collectionPrefixes[Int(payload)]
                return known.count == count && memcmp(base + known.start, base + start, count) == 0
            }) {
                return Int(found.payload)
            }
            collectionIndex.insert(UInt64(collectionPrefixes.count), hash: hash)
            return nil
        }
        let number: Int
        if let found {
            number = found
        } else {
            collectionPrefixes.append((start, count))
            collectionFirstRecords.append(record)
            collectionSuccessors.append(-1)
            number = collectionPrefixes.count - 1
        }
        if last >= 0, guess != number { collectionSuccessors[last] = number }
        lastCollection = number
        return number
    }
}
