import Foundation
import Freshet
import FreshetCommands
import FreshetTesting
@testable import FreshetLMDB
import Testing
import TestSupport

/// `verify` looks every stored key up (`mdb_get`), so it catches a damaged key in a branch page,
/// which a cursor walk never reads (trial finding 4: such a flip in `rowIndex` made lookups of
/// some rows miss while `verify` said ok).
@Suite("freshet verify: a damaged key in a branch page", .scaledTimeLimit(minutes: 1))
struct VerifyLookupTests {
    /// A closed store with one `fetched` (LSN 1) of 3,000 rows `r00000` … `r02999` in `big`:
    /// enough that `rowIndex` and `rows` are two levels deep (a branch page over the leaves).
    func withBigStore(_ body: (URL) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            let many = (0..<3000).map { row(String(format: "r%05d", $0)) }
            try await store.append(.fetched(.init(placement: .upsert, rows: many, response: response())), to: "big")
            store.close()
            try await body(directory)
        }
    }

    /// A node of an LMDB branch page: where its key starts in the file, and the key.
    struct BranchKey { let offset: Int; let key: [UInt8] }

    /// The keys of every branch page (`P_BRANCH`, 0x01) in `data.mdb` whose second node's key
    /// satisfies `matches`, from the page layout in lmdb.h/mdb.c: a 16-byte header (page number,
    /// pad, flags at 10, lower at 12), then 2-byte node offsets; a node is child page number
    /// (lo, hi, flags: 6 bytes), the key size (2 bytes), then the key. The page size is the
    /// free-page tree's `md_pad` in the meta page (offset 40).
    static func branchKeys(_ file: [UInt8], matching matches: ([UInt8]) -> Bool) -> [BranchKey] {
        func u16(_ at: Int) -> Int { Int(file[at]) | Int(file[at + 1]) << 8 }
        let pageSize = u16(40) | u16(42) << 16
        var found: [BranchKey] = []
        for page in stride(from: 2 * pageSize, to: file.count, by: pageSize) where u16(page + 10) & 0x01 != 0 {
            let count = (u16(page + 12) - 16) / 2
            guard count >= 2 else { continue }
            let node = page + u16(page + 16 + 2)
            let key = Array(file[node + 8 ..< node + 8 + u16(node + 6)])
            if matches(key) { found.append(BranchKey(offset: node + 8, key: key)) }
        }
        return found
    }

    /// `big`'s key prefix: 2-byte big-endian length ‖ UTF-8 (docs/log-format.md).
    static let prefix: [UInt8] = [0, 3] + Array("big".utf8)

    /// Checks that the intact store verifies, then raises the last byte of the second key of the
    /// one branch page whose keys match `matches` (`what` names them), and returns that key as
    /// it was. One higher: still below the next separator, but above the first key of its child
    /// page, so a lookup of that key goes to the page before and misses; a cursor still sees it.
    func raiseBranchKey(in directory: URL, _ what: String, matching matches: ([UInt8]) -> Bool) throws -> [UInt8] {
        #expect(runTool(["verify", directory.path]).status == 0)
        let path = directory.appendingPathComponent("data.mdb").path
        var file = Array(try #require(FileManager.default.contents(atPath: path)))
        let keys = Self.branchKeys(file, matching: matches)
        let branch = try #require(keys.count == 1 ? keys.first : nil, "one \(what) branch page, found \(keys.count)")
        #expect(branch.key.last != 0xFF)
        file[branch.offset + branch.key.count - 1] += 1
        try Data(file).write(to: URL(fileURLWithPath: path))
        return branch.key
    }

    @Test("a rowIndex branch key raised by one: the lookup of the row it led to misses, and verify names it")
    func rowIndexBranchKey() async throws {
        try await withBigStore { directory in
            // rowIndex keys: prefix ‖ row ID ("r" and five digits).
            let key = try raiseBranchKey(in: directory, "rowIndex") { $0.count == Self.prefix.count + 6 && $0.starts(with: Self.prefix + Array("r".utf8)) }
            let rowID = String(decoding: key.dropFirst(Self.prefix.count), as: UTF8.self)
            let expected = StoreProblem(database: "rowIndex", collection: "big", rowID: rowID, lsn: 1, message: "a lookup does not find it (damaged index page?)")
            let run = runTool(["verify", directory.path])
            #expect(run.status == 1)
            #expect(run.stdout == ["PROBLEM  \(expected)"])
            #expect(run.stderr == ["freshet: 1 problem in \(directory.path); first: rowIndex · big · row \(rowID) · LSN 1: a lookup does not find it (damaged index page?)"])
            // rowIndex's tree fails its key-order check; only its keys are looked up.
            let seen = try VerifyKeyOrderTests.verify(directory).seen
            #expect(seen.checked["rowIndex"] != "ok" && seen.checked.values.filter { $0 == "ok" }.count == 8)
            #expect(seen.lookups == ["rowIndex": 3000])
        }
    }

    @Test("a rows branch key raised by one: verify names the row at that position")
    func rowsBranchKey() async throws {
        try await withBigStore { directory in
            // rows keys: prefix ‖ 8-byte position (page << 32 | index); page 0 here.
            let key = try raiseBranchKey(in: directory, "rows") { $0.count == Self.prefix.count + 8 && $0.starts(with: Self.prefix + [0, 0, 0, 0]) }
            let index = key.suffix(4).reduce(0) { $0 << 8 | Int($1) }
            // The rows of one upsert take positions 0, 1, … in the order given.
            let expected = StoreProblem(database: "rows", collection: "big", rowID: String(format: "r%05d", index), lsn: 1,
                                        message: "a lookup does not find it (damaged index page?) (page 0, index \(index))")
            let run = runTool(["verify", directory.path])
            #expect(run.status == 1)
            #expect(run.stdout == ["PROBLEM  \(expected)"])
            #expect(run.stderr == ["freshet: 1 problem in \(directory.path); first: \(expected)"])
            let seen = try VerifyKeyOrderTests.verify(directory).seen
            #expect(seen.checked["rows"] != "ok" && seen.checked.values.filter { $0 == "ok" }.count == 8)
            #expect(seen.lookups == ["rows": 3000])
        }
    }
}
