import Foundation

/// Identifies one mutation for its whole life: in the log, in the queue, and on the wire as
/// the `Idempotency-Key` header. Made by the store's injected ID source.
public struct MutationID: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public var rawValue: UUID
    public init(rawValue: UUID) { self.rawValue = rawValue }
    public init(_ uuid: UUID) { self.rawValue = uuid }
    /// The lowercase UUID string, as sent in `Idempotency-Key`.
    public var description: String { rawValue.uuidString.lowercased() }
    public static func < (a: MutationID, b: MutationID) -> Bool { a.description < b.description }

    var bytes: [UInt8] { withUnsafeBytes(of: rawValue.uuid) { Array($0) } }

    init(bytes: [UInt8]) throws(FormatError) {
        guard bytes.count == 16 else { throw FormatError(reason: "a mutation ID is 16 bytes, not \(bytes.count)") }
        let t = (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                 bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])
        self.rawValue = UUID(uuid: t)
    }
}
