import Foundation

extension ReplayPoint {
    /// Whether a record stamped `timestamp` (microseconds) comes after `time` as the tools
    /// compare them: at the millisecond `dump`, `replay` and `why` print (ISO 8601 with three
    /// fractional digits, ``LogRecord/iso8601(_:)``), so `--at` with a time copied from `dump`
    /// takes that record — everything up to the end of that millisecond is taken.
    ///
    /// `--at 2026-12-01T03:20:58.464Z` takes a record stamped 03:20:58.464512 and stops before
    /// one stamped 03:20:58.465500.
    static func isAfter(_ timestamp: Date, _ time: Date) -> Bool {
        printedMillisecond(timestamp) > floorDivision(ByteWriter.micros(time), 1_000)
    }

    /// The millisecond since 1970 that ``LogRecord/iso8601(_:)`` prints for `date`: computed
    /// from the reference date as Foundation's formatter does (as `LogRecord.writeISO8601`
    /// does), so a record stamped .464000 that prints as .463 counts as .463.
    static func printedMillisecond(_ date: Date) -> Int64 {
        let t = date.timeIntervalSinceReferenceDate
        let seconds = t.rounded(.down)
        guard seconds > -63_113_904_000, seconds < 252_423_993_600 else { return floorDivision(ByteWriter.micros(date), 1_000) }
        return (Int64(seconds) + 978_307_200) * 1000 + Int64(((t - seconds) * 1000).rounded(.down))
    }

    /// `value / divisor` rounded down (times before 1970 are negative).
    static func floorDivision(_ value: Int64, _ divisor: Int64) -> Int64 {
        let (q, r) = value.quotientAndRemainder(dividingBy: divisor)
        return r < 0 ? q - 1 : q
    }
}
