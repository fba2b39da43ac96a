import Testing
@testable import Freshet

/// The record checksum: the CPU-instruction path and the table path against a bit-at-a-time
/// reference (the published check values are in ``LogRecordCodecTests``).
@Suite("CRC-32C")
struct CRC32CTests {
    /// The definition: reflected polynomial 0x82F63B78, one bit at a time (RFC 3720 §B.4).
    static func reference(_ bytes: some Collection<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }

    /// 1,100 reproducible bytes (SplitMix64).
    static let bytes = splitMix(1100)

    /// 60,000 reproducible bytes: enough for the hardware path's three-stream blocks
    /// (3 × 256 and 3 × 8,192 bytes) and the bytes after them.
    static let long = splitMix(60_000)

    static func splitMix(_ count: Int) -> [UInt8] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return (0..<count).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return UInt8(truncatingIfNeeded: z ^ (z >> 31))
        }
    }

    @Test("the hardware and table paths equal the bit-at-a-time definition at every alignment and length",
          arguments: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 1000, 1091])
    func pathsAgree(length: Int) {
        for start in 0..<9 {
            let slice = Self.bytes[start..<(start + length)]
            let expected = Self.reference(slice)
            #expect(CRC32C.checksum(slice) == expected)
            #expect(CRC32C.portableChecksum(slice) == expected)
        }
    }

    @Test("long inputs: three streams combined equal the definition, around each block boundary",
          arguments: [767, 768, 769, 1535, 1536, 2311, 24_575, 24_576, 24_577, 25_343, 49_152, 49_929, 59_991])
    func longPathsAgree(length: Int) {
        for start in [0, 1, 5, 8] {
            let slice = Self.long[start..<(start + length)]
            let expected = Self.reference(slice)
            #expect(CRC32C.checksum(slice) == expected)
            #expect(CRC32C.portableChecksum(slice) == expected)
        }
    }

    @Test("a checksum continued over a second part equals the checksum of both parts at once")
    func continued() {
        let whole = Self.bytes[0..<1000]
        for split in [0, 1, 7, 8, 500, 999, 1000] {
            let first = CRC32C.checksum(whole[0..<split])
            #expect(CRC32C.checksum(whole[split...], continuing: first) == Self.reference(whole))
        }
    }

    @Test("a non-contiguous collection gets the same checksum as its bytes in an array")
    func nonContiguous() {
        let lazyBytes = Self.bytes[0..<100].lazy.map { $0 }
        #expect(CRC32C.checksum(lazyBytes) == Self.reference(Self.bytes[0..<100]))
    }
}
