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
        LogRecord.printedMillisecond(timestamp) > LogRecord.printedMillisecond(time)
    }

    /// The time statuses are judged at for `--at time`: `time`, or the last record taken when
    /// it was stamped later within the same printed millisecond (``isAfter(_:_:)`` took it).
    /// Judging at the millisecond's start would put the clock before that record's own stamp,
    /// so a collection it just validated read as stale ("the clock was moved back"), unlike
    /// `--to` that record's LSN (trial 4).
    static func judgingTime(asked time: Date, lastTaken: Date?) -> Date {
        guard let lastTaken, lastTaken > time else { return time }
        return lastTaken
    }
}
