/// A log sequence number: the position of an event in a store's log.
///
/// LSNs start at 1, are strictly increasing in commit order, are never reused (also across
/// reopen and compaction), and are stored as 8 big-endian bytes so LMDB's byte order is LSN order.
public struct LSN: RawRepresentable, Sendable, Hashable, Comparable, Codable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(_ value: UInt64) { self.rawValue = value }
    public init(integerLiteral value: UInt64) { self.rawValue = value }
    /// The LSN before the first event: an empty log's last LSN.
    public static let zero = LSN(0)
    public var description: String { String(rawValue) }
    public static func < (a: LSN, b: LSN) -> Bool { a.rawValue < b.rawValue }
    /// The last LSN a log can hold (2⁶⁴ − 1); appending after it fails with
    /// ``StoreError/logExhausted``.
    public static let max = LSN(UInt64.max)
    /// The next LSN, or nil after ``max``: checked arithmetic for LSNs read from disk.
    public var successor: LSN? { rawValue == UInt64.max ? nil : LSN(rawValue + 1) }
    /// The next LSN. Asking for the one after ``max`` is a programmer error (a precondition);
    /// code that meets LSNs from disk or from callers uses ``successor``.
    public var next: LSN {
        guard let successor else { preconditionFailure("no LSN follows \(rawValue) (2^64 - 1)") }
        return successor
    }

    var keyBytes: [UInt8] { withUnsafeBytes(of: rawValue.bigEndian) { Array($0) } }
}
