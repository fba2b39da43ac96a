import Foundation

/// Where a fetched page's rows' JSON lies in one buffer: row `i`'s bytes are `ranges[i]` of
/// `storage` (offsets from its first byte, 0-based). ``RowExtraction`` makes it when every
/// row is a slice of the response body (already canonical), so that the log record's payload
/// and the fold's ``EncodedRows`` read all rows through one pointer: a `Data` access per row
/// (a dynamic exclusivity check inside Foundation and a retain and release of the body's
/// storage) was most of writing a 1,000-row page twice (docs/performance.md, round 11).
struct RowSlices: Sendable {
    let storage: Data
    let ranges: [Range<Int>]

    var count: Int { ranges.count }

    /// Lends the buffer and the ranges to `body`, for the length of the call.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer, UnsafeBufferPointer<Range<Int>>) throws -> R) rethrows -> R {
        try storage.withUnsafeBytes { bytes in
            try ranges.withUnsafeBufferPointer { ranges in try body(bytes, ranges) }
        }
    }
}
