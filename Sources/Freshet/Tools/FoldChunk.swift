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
    /// The bytes ``Upsert``s point into: per prepared record its `rowIndex` key, then (a one-row
    /// upsert's) the row as `rows` stores it.
    private(set) var upsertBytes: [UInt8] = []
    /// The collections of the one-row upserts, numbered in order of first appearance
    /// (``Upsert/collection``): each one's first record (for its name) and where its key prefix
    /// is in ``upsertBytes``, and a hash index over the prefixes.
    private(set) var collectionFirstRecords: [Int] = []
    private var collectionPrefixes: [(start: Int, count: Int)] = []
    private var collectionIndex = ByteHashIndex()

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
    struct Upsert {
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

    /// Empties the chunk for the next one, keeping the arrays' capacity (``FoldPipeline/submit(_:)``
    /// hands folded chunks back this way). The records are not freed but kept (``recycledOps()``):
    /// the next records decoded into the chunk refill their ops arrays.
    mutating func removeAll() {
        recycled.removeAll(keepingCapacity: true)
        swap(&records, &recycled)
        // The two arrays take turns; the first time, the one taking the records' place is new.
        records.reserveCapacity(recycled.capacity)
        nextRecycled = 0
        proposals.removeAll(keepingCapacity: true)
        upserts.removeAll(keepingCapacity: true)
        upsertBytes.removeAll(keepingCapacity: true)
        collectionFirstRecords.removeAll(keepingCapacity: true)
        collectionPrefixes.removeAll(keepingCapacity: true)
        collectionIndex = ByteHashIndex()
        problems.removeAll(keepingCapacity: true)
    }

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
        guard nextRecycled < recycled.count else { return [] }
        // The event is swapped out of the kept record (an empty row change left in its place)
        // and its array moved out of it: nothing is copied or retained, so the array stays
        // uniquely referenced and is written in place.
        var event = Event.localWrite(Event.RowChanges([]))
        swap(&event, &recycled[nextRecycled].event)
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
    /// the read transaction) only for a proposal.
    mutating func append(_ record: consuming LogRecord, bytes: UnsafeRawBufferPointer) {
        if case .mutationProposed = record.event { proposals.append(Array(bytes)) }
        upserts.append(prepare(record, bytes: bytes))
        records.append(record)
    }

    /// The ``Upsert`` of `record` (the one about to be appended), whose encoding is `bytes`: its
    /// key and row appended to ``upsertBytes``. The prefix (``Keys/collection(_:)``: the name's
    /// length in 2 bytes, big-endian, then the name) is bytes 20 ..< 22 + n of the record as it
    /// lies (docs/log-format.md), so only the ID and the JSON are copied.
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
        guard bytes.count >= 22 else { return Upsert() }
        let end = 22 + (Int(bytes[20]) << 8 | Int(bytes[21]))
        guard bytes.count >= end else { return Upsert() }
        let prefix = UnsafeRawBufferPointer(rebasing: bytes[20..<end])
        var u = Upsert()
        u.start = upsertBytes.count
        u.prefixCount = prefix.count
        upsertBytes.append(contentsOf: prefix)
        var utf8 = id
        utf8.withUTF8 { upsertBytes.append(contentsOf: UnsafeRawBufferPointer($0)) }
        u.keyCount = upsertBytes.count - u.start
        u.hash = upsertBytes.withUnsafeBytes { ByteHashIndex.hash(UnsafeRawBufferPointer(rebasing: $0[u.start..<(u.start + u.keyCount)])) }
        // The fold's own fast path takes what ``Fold/apply(lent:to:in:)`` folds through
        // ``Fold/upsert(_:state:prefix:in:)`` alone: a local write (or a change without a push
        // origin) of exactly one upserted row.
        guard let row, changes.origin == nil, changes.ops.count == 1, row.json.count <= Self.preparedRowLimit else {
            upsertBytes.removeSubrange(u.start...)
            return Upsert(hash: u.hash)
        }
        // The row as `rows` stores it: the ID's length as a varint (ByteWriter.varint), the ID, the JSON.
        var v = UInt64(u.keyCount - u.prefixCount)
        while v >= 0x80 {
            upsertBytes.append(UInt8(truncatingIfNeeded: v & 0x7F) | 0x80)
            v >>= 7
        }
        upsertBytes.append(UInt8(truncatingIfNeeded: v))
        utf8.withUTF8 { upsertBytes.append(contentsOf: UnsafeRawBufferPointer($0)) }
        row.json.withUnsafeBytes { upsertBytes.append(contentsOf: $0) }
        u.rowCount = upsertBytes.count - u.start - u.keyCount
        u.collection = collectionNumber(prefixAt: u.start, count: u.prefixCount, record: records.count)
        return u
    }

    /// The number of the collection whose key prefix is ``upsertBytes``[`start` ..< `start + count`]
    /// among this chunk's, numbered anew when it is the first.
    private mutating func collectionNumber(prefixAt start: Int, count: Int, record: Int) -> Int {
        let found = upsertBytes.withUnsafeBytes { all -> Int? in
            let prefix = UnsafeRawBufferPointer(rebasing: all[start..<(start + count)])
            let hash = ByteHashIndex.hash(prefix)
            if let found = collectionIndex.find(hash: hash, matches: { payload in
                let known = collectionPrefixes[Int(payload)]
                return known.count == count && OrderedTable.compare(UnsafeRawBufferPointer(rebasing: all[known.start..<(known.start + known.count)]), prefix) == 0
            }) {
                return Int(found.payload)
            }
            collectionIndex.insert(UInt64(collectionPrefixes.count), hash: hash)
            return nil
        }
        if let found { return found }
        collectionPrefixes.append((start, count))
        collectionFirstRecords.append(record)
        return collectionPrefixes.count - 1
    }
}
