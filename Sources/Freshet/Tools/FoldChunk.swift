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
    /// What reading found before or among these records (undecodable records, missing LSNs),
    /// in log order; the fold's own problems follow them.
    var problems: [StoreProblem] = []

    init(capacity: Int = 0) {
        records.reserveCapacity(capacity)
    }

    /// Records with their bytes, as ``DamagedLog`` collects them.
    init(_ entries: [(record: LogRecord, bytes: [UInt8])]) {
        records.reserveCapacity(entries.count)
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
        records.append(record)
    }
}
