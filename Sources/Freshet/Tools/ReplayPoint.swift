import Foundation

/// How far `replay` folds the log.
public enum ReplayPoint: Sendable, Hashable {
    /// Every record.
    case end
    /// Records up to and including this LSN.
    case lsn(LSN)
    /// Records in log order up to the first one stamped after this time, compared to the
    /// millisecond as the tools print times (a clock that moved
    /// backwards does not let a later record slip in ahead of the ones before it).
    case time(Date)
}
