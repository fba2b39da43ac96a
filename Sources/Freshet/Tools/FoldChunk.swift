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

    /// Frees the records, proposals and problems, keeping the arrays' capacity for the next
    /// chunk (``FoldPipeline/submit(_:)`` hands folded chunks back this way).
    mutating func removeAll() {
        records.removeAll(keepingCapacity: true)
        proposals.removeAll(keepingCapacity: true)
        problems.removeAll(keepingCapacity: true)
    }

    /// Adds `record` (moved in, not copied), keeping a copy of `bytes` (its encoding, lent by
    /// the read transaction) only for a proposal.
    mutating func append(_ record: consuming LogRecord, bytes: UnsafeRawBufferPointer) {
        if case .mutationProposed = record.event { proposals.append(Array(bytes)) }
        records.append(record)
    }
}
