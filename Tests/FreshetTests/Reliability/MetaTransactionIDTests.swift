import Foundation
@testable import Freshet
@testable import FreshetLMDB
import Testing

/// A damaged transaction ID in a meta page (trial 16 finding 1). LMDB writes transaction N's
/// meta to page N mod 2 and uses the meta page with the larger ID; an ID of the wrong parity
/// is provably damaged and refused before LMDB opens the file. One of the right parity is not
/// detectable and rolls the store back to the transaction before (docs/reliability.md).
@Suite("Damaged meta transaction IDs", .scaledTimeLimit(minutes: 1))
struct MetaTransactionIDTests {
    /// The fixture store's file, its page size and its current transaction ID.
    static func fixture(in directory: URL) async throws -> (bytes: [UInt8], pageSize: Int, txnid: UInt64) {
        try await DamagedStoreFixture.build(in: directory)
        let data = directory.appendingPathComponent("data.mdb")
        let summary = try DataFile(path: data.path).check()
        return (Array(try Data(contentsOf: data)), summary.pageSize, summary.transactionID)
    }

    static func lastLSN(_ directory: URL) throws -> LSN {
        let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
        defer { store.close() }
        return store.lastLSN
    }

    @Test("the current meta page's ID with its low byte flipped (31 → 224 on page 1) has the wrong parity: corrupted, naming the page and the ID")
    func wrongParityRefused() async throws {
        try await withTemporaryDirectory { directory in
            let (bytes, pageSize, txnid) = try await Self.fixture(in: directory)
            let page = Int(txnid & 1)
            var damaged = bytes
            damaged[page * pageSize + 144] ^= 0xFF
            let id = txnid ^ 0xFF
            try Data(damaged).write(to: directory.appendingPathComponent("data.mdb"))
            #expect(throws: DataFileDamage.self) { try DataFile(path: directory.appendingPathComponent("data.mdb").path).check() }
            #expect {
                _ = try Store(directory: directory, configuration: .test(), dependencies: .test())
            } throws: { error in
                let e = error as? StoreError
                return e?.code == .corrupted && e?.message.contains("page \(page): meta page holds transaction ID \(id), which LMDB writes to meta page \(1 - page) (ID N to page N mod 2): the ID is damaged") == true
            }
        }
    }

    @Test("an ID of the right parity cannot be told from a sound one: the store opens at the transaction before, as documented")
    func rightParityUndetectable() async throws {
        try await withTemporaryDirectory { directory in
            let (bytes, pageSize, txnid) = try await Self.fixture(in: directory)
            let last = try Self.lastLSN(directory)
            // Current page's ID lowered by 2 (31 → 29): the older meta page now has the larger ID.
            var damaged = bytes
            let at = Int(txnid & 1) * pageSize + 144
            try #require(txnid >= 3)
            for i in 0..<8 { damaged[at + i] = UInt8(truncatingIfNeeded: (txnid - 2) >> (8 * UInt64(i))) }
            try Data(damaged).write(to: directory.appendingPathComponent("data.mdb"))
            #expect(try Self.lastLSN(directory) < last)
        }
    }
}
