internal import CCRC32C

/// CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78), as used by iSCSI
/// (RFC 3720 §B.4), ext4 and LevelDB: initial value 0xFFFFFFFF, final XOR 0xFFFFFFFF.
/// `crc32c("123456789") == 0xE3069283`.
///
/// Computed by a small C function (`Sources/CCRC32C`) that uses the CPU's CRC32 instruction
/// when it has one (x86_64 SSE4.2, ARMv8 CRC extension; checked at run time) and otherwise
/// slicing-by-8 tables — both give the same value, which the tests check against the
/// bit-at-a-time definition.
enum CRC32C {
    /// The checksum of `bytes`; with `continuing`, the checksum of the bytes that gave that
    /// value followed by `bytes`.
    static func checksum<C: Collection>(_ bytes: C, continuing crc: UInt32 = 0) -> UInt32 where C.Element == UInt8 {
        if let result = bytes.withContiguousStorageIfAvailable({ freshet_crc32c(crc, $0.baseAddress, $0.count) }) {
            return result
        }
        return Array(bytes).withUnsafeBufferPointer { freshet_crc32c(crc, $0.baseAddress, $0.count) }
    }

    /// The same checksum by the table path only, for tests.
    static func portableChecksum<C: Collection>(_ bytes: C) -> UInt32 where C.Element == UInt8 {
        Array(bytes).withUnsafeBufferPointer { freshet_crc32c_portable(0, $0.baseAddress, $0.count) }
    }

    /// Whether this machine's CPU computes it (SSE4.2 or ARMv8 CRC).
    static var usesHardware: Bool { freshet_crc32c_hardware() != 0 }
}
