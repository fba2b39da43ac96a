/// What ``Store/vacuum(directory:)`` did to `data.mdb`.
public struct VacuumReport: Sendable, Hashable {
    /// The file's size before, in bytes.
    public let bytesBefore: Int
    /// The file's size after, in bytes (the pages in use, without free ones).
    public let bytesAfter: Int
}
