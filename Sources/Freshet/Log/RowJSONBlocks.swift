import Foundation

/// Where a record decoder puts the JSON of the row changes it decodes: each row's own `Data`
/// (``separate``, what every decoder handing rows to an app uses), or slices of blocks shared
/// by many rows (``shared``: the log tools' chunks, ``LogFolder``).
///
/// A shared block is one allocation of ``blockSize`` bytes holding the JSON of the rows decoded
/// after each other, ~900 W5 rows; each row's `json` is a slice of it (`block[a ..< b]`: a
/// retain of the block, no allocation), and the block is freed with the last row that refers to
/// it. Its `Data` is made over memory this value allocated and keeps writing into, past the
/// bytes already handed out: a slice's bytes are written before the slice is made and never
/// after, so every `Data` a row holds is immutable like any other. Before issue 8's speed round
/// 5 every row's JSON was a `Data` of its own, a `__DataStorage` object and a buffer: two
/// allocations per record, freed when the chunk came back (docs/performance.md, W5).
///
/// A slice's `startIndex` is where it starts in its block, not 0: code reading `Row.json` must
/// use `withUnsafeBytes`, `count`, `==` or the collection's own indices (the fold does), never
/// an offset from 0. Rows handed to users (snapshots, ``Replay``, `why`'s timeline) are never
/// slices: they come from the materialized state or a ``separate`` decoder.
struct RowJSONBlocks {
    /// Bytes per shared block; 0: every row gets a `Data` of its own.
    let blockSize: Int
    /// The block being filled and where its free bytes start.
    private var block = Data()
    private var base: UnsafeMutableRawPointer?
    private var used = 0

    private init(blockSize: Int) {
        self.blockSize = blockSize
    }

    /// Every row's JSON copied into a `Data` of its own (zero-based, owning its bytes).
    static var separate: RowJSONBlocks { RowJSONBlocks(blockSize: 0) }

    /// Rows' JSON as slices of shared blocks of `blockSize` bytes (64 KiB: below glibc's
    /// `mmap` threshold, so a block is a heap allocation, not a mapping and its page faults).
    /// A row of more than a quarter of a block gets a `Data` of its own.
    static func shared(blockSize: Int = 65_536) -> RowJSONBlocks {
        precondition(blockSize > 0, "RowJSONBlocks blockSize must be positive")
        return RowJSONBlocks(blockSize: blockSize)
    }

    /// `bytes` (lent by the record being decoded) as a row's JSON.
    mutating func data(_ bytes: UnsafeRawBufferPointer) -> Data {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return Data() }
        guard blockSize > 0, bytes.count <= blockSize / 4 else { return Data(bytes: source, count: bytes.count) }
        if base == nil || blockSize - used < bytes.count { startBlock() }
        guard let base else { preconditionFailure("RowJSONBlocks: no block after startBlock") }
        (base + used).copyMemory(from: source, byteCount: bytes.count)
        let start = used
        used += bytes.count
        return block[start..<used]
    }

    /// A new block; the one before lives on in the slices that refer to it.
    private mutating func startBlock() {
        let memory = UnsafeMutableRawPointer.allocate(byteCount: blockSize, alignment: 16)
        // Freed when the last slice of the block is released (on the thread that releases it:
        // the log tools free their chunks on the reading thread, which allocated them).
        block = Data(bytesNoCopy: memory, count: blockSize, deallocator: .custom { pointer, _ in pointer.deallocate() })
        base = memory
        used = 0
    }
}
