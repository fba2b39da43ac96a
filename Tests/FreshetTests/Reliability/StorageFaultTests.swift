import Foundation
import ProcessSupport
import FreshetLMDB
import Testing
@testable import Freshet
#if canImport(Glibc)
import Glibc
#endif

/// Issue 12 item 3: storage faults on an existing store — the map filling up in the middle of
/// a large fold, the disk filling up, the same directory reached through another name, and a
/// store written by a future format. Each leaves what was committed exactly as it was.
@Suite("Storage faults")
struct StorageFaultTests {
    /// The log's records as `LSN kind collection`, and each collection's row IDs: what
    /// "the previous state is intact" compares.
    static func state(_ store: Store) throws -> [String] {
        var lines: [String] = []
        try store.readLog { entry in
            if case .record(let r) = entry { lines.append("\(r.lsn) \(r.kind) \(r.collection)") } else { lines.append("\(entry.lsn) unreadable") }
            return true
        }
        for collection in try store.collections() {
            lines.append("\(collection): \(try store.snapshot(collection).rows.map(\.id).joined(separator: ","))")
        }
        return lines
    }

    /// A `fetched` event replacing `collection` with `count` rows of about `bytes` bytes each.
    static func bigFetch(_ count: Int, bytes: Int, tag: String) -> Event {
        let pad = String(repeating: "p", count: bytes)
        let rows = (0..<count).map { Row(id: "\(tag)-\($0)", json: Data("{\"n\":\($0),\"pad\":\"\(pad)\"}".utf8)) }
        return .fetched(Event.Fetched(placement: .replace, rows: rows, response: ResponseInfo(url: "http://stub.invalid/big", status: 200, etag: "\"\(tag)\"")))
    }

    @Test("a fetch whose fold overflows the map is mapFull, aborts its transaction, and leaves the log, rows and SyncMark as they were; a larger map then takes it")
    func mapFullMidFold() async throws {
        try await withTemporaryDirectory { directory in
            var small = Configuration.test()
            small.mapSize = 2 << 20
            small.maxMapSize = 2 << 20 // no growth: the map is full for good
            let store = try Store(directory: directory, configuration: small, dependencies: .test())
            try await store.localWrite("notes", [.upsert(row("a")), .upsert(row("b"))])
            try await store.append(Self.bigFetch(10, bytes: 100, tag: "small"), to: "big")
            let before = try Self.state(store)
            let markBefore = try store.snapshot("big").syncMark
            // About 1.2 MB of rows: the log record (overflow pages) fits in the 2 MiB map, its
            // fold into `rows` and `rowIndex` does not.
            let error = await #expect(throws: StoreError.self) {
                try await store.append(Self.bigFetch(3000, bytes: 400, tag: "huge"), to: "big")
            }
            #expect(error?.code == .mapFull)
            #expect(error?.message == "appending to big: the store is full (LMDB map size reached, grown up to Configuration.maxMapSize); compact it or reopen it with a larger maxMapSize")
            #expect(try Self.state(store) == before)
            #expect(try store.snapshot("big").syncMark == markBefore)
            #expect(store.lastLSN == LSN(2))
            #expect(try store.verify().isOK)
            // A small append still fits and takes the next LSN: nothing of the failed one remains.
            #expect(try await store.localWrite("notes", [.upsert(row("c"))]) == LSN(3))
            store.close()

            var large = Configuration.test()
            large.mapSize = 64 << 20
            large.maxMapSize = 64 << 20
            let reopened = try Store(directory: directory, configuration: large, dependencies: .test())
            defer { reopened.close() }
            #expect(try await reopened.append(Self.bigFetch(3000, bytes: 400, tag: "huge"), to: "big") == LSN(4))
            #expect(try reopened.snapshot("big").rows.count == 3000)
            #expect(try reopened.ids("notes") == ["a", "b", "c"])
            #expect(try reopened.verify().isOK)
        }
    }

    @Test("the disk filling up under an existing store is diskFull; every acknowledged write survives, the store verifies, and it takes writes again once there is room",
          arguments: ["tmpfs", "RLIMIT_FSIZE"])
    func diskFullOnExistingStore(fault: String) async throws {
        try await withTemporaryDirectory { scratch in
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            // A 2 MiB tmpfs (a real ENOSPC) where this process may mount one; otherwise, and for
            // the RLIMIT_FSIZE case, a file size limit in the child (EFBIG, as a full disk is ENOSPC).
            let mountPoint = scratch.appendingPathComponent("disk")
            try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
            let mounted = fault == "tmpfs" && StoreFileTests.run("/bin/mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", mountPoint.path]) == 0
            defer { if mounted { _ = StoreFileTests.run("/bin/umount", [mountPoint.path]) } }
            let directory = mountPoint.appendingPathComponent("store")
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            try await store.localWrite("notes", [.upsert(row("before"))])
            store.close()
            let size = try #require(try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("data.mdb").path)[.size] as? Int)

            // The child may grow data.mdb by 256 KiB (or until the tmpfs is full), then every
            // commit fails.
            let limit = mounted ? "none" : String(size + 256 * 1024)
            let helper = try await StoreHelper(["fill", directory.path, limit])
            var acked: [Int] = []
            var last = ""
            while true {
                last = try await helper.nextLine()
                let words = last.split(separator: " ")
                guard words.first == "acked", words.count == 3, let n = Int(words[1]) else { break }
                acked.append(n)
            }
            let rowsLine = try await helper.nextLine()
            #expect(await helper.waitForExit() == 3)
            #expect(last.hasPrefix("full diskFull appending to fill: no space left for the store (mdb_txn_commit: "), "\(last)")
            if mounted {
                #expect(last.contains("; the file system holding \(directory.path) has "), "\(last)")
            } else {
                #expect(last.hasSuffix("; data.mdb is \(size + 256 * 1024) bytes, at the file size limit RLIMIT_FSIZE of \(size + 256 * 1024) bytes)"), "\(last)")
            }
            // How many fit depends on page allocation (copy-on-write pages, free-list reuse).
            #expect(acked.count >= 2, "\(acked.count) writes were acknowledged")
            #expect(acked == Array(0..<acked.count))
            #expect(rowsLine == "rows \(acked.count)")

            // Room again: delete a filler file when on the tmpfs; without the limit otherwise.
            let reopened = try Store(directory: directory, configuration: .test(), dependencies: .test())
            defer { reopened.close() }
            #expect(try reopened.ids("notes") == ["before"])
            #expect(try reopened.snapshot("fill").rows.count == acked.count)
            #expect(reopened.lastLSN == LSN(UInt64(1 + acked.count)))
            #expect(try reopened.verify().isOK)
            #expect(try await reopened.localWrite("notes", [.upsert(row("after"))]) == LSN(UInt64(2 + acked.count)))
        }
    }

    @Test("the same directory reached through a bind mount (or, where mounting is not allowed, a symlinked parent) is alreadyOpen, and the open store is untouched")
    func bindMountedDirectory() async throws {
        try await withTemporaryDirectory { scratch in
            let directory = scratch.appendingPathComponent("store")
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            defer { store.close() }
            try await store.localWrite("notes", [.upsert(row("a"))])
            let mountPoint = scratch.appendingPathComponent("mounted")
            try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
            let mounted = StoreFileTests.run("/bin/mount", ["--bind", directory.path, mountPoint.path]) == 0
            defer { if mounted { _ = StoreFileTests.run("/bin/umount", [mountPoint.path]) } }
            let other: URL
            if mounted {
                other = mountPoint
            } else {
                let alias = scratch.appendingPathComponent("alias")
                try FileManager.default.createSymbolicLink(at: alias, withDestinationURL: scratch)
                other = alias.appendingPathComponent("store")
            }
            #expect(FileManager.default.fileExists(atPath: other.appendingPathComponent("data.mdb").path))
            let error = #expect(throws: StoreError.self) {
                try Store(directory: other, configuration: .test(), dependencies: .test())
            }
            #expect(error?.code == .alreadyOpen)
            #expect(error?.message == "\(other.standardizedFileURL.path) is already open in this process (under this or another path); share the one Store")
            // Read-only (as the tools open it) is refused the same way.
            let readOnly = #expect(throws: StoreError.self) {
                try Store(directory: other, configuration: .test(), dependencies: .test(), create: false)
            }
            #expect(readOnly?.code == .alreadyOpen)
            #expect(try await store.localWrite("notes", [.upsert(row("b"))]) == LSN(2))
            #expect(try store.ids("notes") == ["a", "b"])
            store.close()
            // Once closed, the other name opens it, and sees both writes.
            let again = try Store(directory: other, configuration: .test(), dependencies: .test())
            defer { again.close() }
            #expect(try again.ids("notes") == ["a", "b"])
        }
    }

    @Test("a hard-linked data.mdb is alreadyOpen whichever of the two directories was opened first")
    func hardLinkEitherOrder() async throws {
        try await withTemporaryDirectory { scratch in
            let first = scratch.appendingPathComponent("first")
            let second = scratch.appendingPathComponent("second")
            let store = try Store(directory: first, configuration: .test(), dependencies: .test())
            try await store.localWrite("notes", [.upsert(row("a"))])
            store.close()
            try FileManager.default.createDirectory(at: second, withIntermediateDirectories: true)
            #expect(link(first.appendingPathComponent("data.mdb").path, second.appendingPathComponent("data.mdb").path) == 0)
            // The second directory first this time: its own lock.mdb, the shared data.mdb.
            let viaLink = try Store(directory: second, configuration: .test(), dependencies: .test())
            defer { viaLink.close() }
            #expect(try viaLink.ids("notes") == ["a"])
            let error = #expect(throws: StoreError.self) {
                try Store(directory: first, configuration: .test(), dependencies: .test())
            }
            #expect(error?.code == .alreadyOpen)
            #expect(try await viaLink.localWrite("notes", [.upsert(row("b"))]) == LSN(2))
        }
    }

    @Test("a store from a future format version is unsupportedFormat, writable or read-only, and its files are left byte for byte as they were", arguments: [true, false])
    func futureFormatVersion(create: Bool) async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            try await store.localWrite("notes", [.upsert(row("a"))])
            store.close()
            try NumberLimitTests.poke(directory) { txn, dbs in
                try txn.put(dbs.meta, key: MetaKey.formatVersion, value: [StoreFormat.readable.upperBound + 1])
            }
            let data = directory.appendingPathComponent("data.mdb")
            let bytes = try Data(contentsOf: data)
            let listing = try StoreFileTests.listing(directory)
            for _ in 0..<2 {
                let error = #expect(throws: StoreError.self) {
                    try Store(directory: directory, configuration: .test(), dependencies: .test(), create: create)
                }
                #expect(error?.code == .unsupportedFormat)
                #expect(error?.message == "\(directory.path) has store format \(StoreFormat.readable.upperBound + 1); this Freshet reads formats 1 to 2")
                #expect(try Data(contentsOf: data) == bytes)
                #expect(try StoreFileTests.listing(directory) == listing)
            }
            // The CLI says so too and exits 2 (unreadable), touching nothing.
            let run = runTool(["verify", directory.path])
            #expect(run.status == 2)
            #expect(try Data(contentsOf: data) == bytes)
        }
    }

    @Test("a new data.mdb appears complete: no staging file is left, and a staging file a killed creator left is removed by the next open")
    func creationIsAtomic() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            // A creator killed mid-way: its staging file (empty, as after open(O_CREAT)) under
            // the PID of a process that has ended.
            let ended = try SpawnedProcess(["/bin/true"])
            #expect(ended.wait() == .exited(0))
            let leftover = directory.appendingPathComponent("data.mdb.creating-\(ended.pid)")
            #expect(FileManager.default.createFile(atPath: leftover.path, contents: Data()))
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            defer { store.close() }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["data.mdb", "lock.mdb"])
            let size = try #require(try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("data.mdb").path)[.size] as? Int)
            #expect(size >= 2 * Int(sysconf(Int32(_SC_PAGESIZE))), "data.mdb holds both meta pages")
            #expect(try await store.localWrite("notes", [.upsert(row("a"))]) == LSN(1))
        }
    }
}
