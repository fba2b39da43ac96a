import Foundation
import Freshet
import FreshetTesting
import Testing

@Suite("Map growth and self-compaction")
struct MapGrowthTests {
    /// 200 rows of about 10 KB each: about 2 MB, eight times a 256 KiB map.
    static let bigRows = (0..<200).map { i in Row(id: "r\(i)", json: Data(#"{"i":\#(i),"pad":"\#(String(repeating: "p", count: 10_000))"}"#.utf8)) }

    /// A 256 KiB map that may grow to 16 MiB: ``bigRows`` fill it eight times over.
    static var growing: Configuration {
        var configuration = Configuration.test()
        configuration.mapSize = 1 << 18
        configuration.maxMapSize = 1 << 24
        return configuration
    }

    @Test("a write that finds the map full grows it (up to maxMapSize) and succeeds")
    func growsTheMap() async throws {
        try await withTemporaryStore(configuration: Self.growing) { store in
            for row in Self.bigRows {
                try await store.localWrite("big", [.upsert(row)])
            }
            let rows = try store.snapshot("big").rows.count
            #expect(rows == 200)
            #expect(store.lastLSN == 200)
            let size = try #require(try FileManager.default.attributesOfItem(atPath: store.directory.appendingPathComponent("data.mdb").path)[.size] as? Int)
            #expect(size > 1 << 18)
            #expect(try store.verify().problems == [])
        }
    }

    @Test("past maxMapSize a write fails with mapFull and keeps everything committed before")
    func failsPastTheLimit() async throws {
        var configuration = Configuration.test()
        configuration.mapSize = 1 << 18
        configuration.maxMapSize = 1 << 19
        try await withTemporaryStore(configuration: configuration) { store in
            var committed = 0
            var failure: StoreError?
            for row in Self.bigRows {
                do {
                    try await store.localWrite("big", [.upsert(row)])
                    committed += 1
                } catch {
                    failure = error as? StoreError
                    break
                }
            }
            #expect(failure?.code == .mapFull)
            #expect(failure?.message.contains("maxMapSize") == true)
            #expect(committed > 10)
            #expect(committed < 200)
            let rows = try store.snapshot("big").rows.count
            #expect(rows == committed)
            #expect(store.lastLSN == LSN(UInt64(committed)))
        }
    }

    @Test("a compaction policy compacts on open once the threshold is reached, and not before")
    func compactsOnOpen() async throws {
        try await withTemporaryDirectory { directory in
            var configuration = Configuration.test()
            configuration.mapSize = 1 << 24
            do {
                let store = try Store(directory: directory, configuration: configuration, dependencies: .test())
                defer { store.close() }
                for i in 0..<12 { try await store.localWrite("notes", [.upsert(row("n\(i % 3)", "v\(i)"))]) }
            }
            configuration.compaction = CompactionPolicy(keep: .zero, threshold: 13)
            do {
                let store = try Store(directory: directory, configuration: configuration, dependencies: .test())
                defer { store.close() }
                #expect(store.openCompaction == nil)
                try await store.localWrite("notes", [.upsert(row("n3", "v12"))])
            }
            let store = try Store(directory: directory, configuration: configuration, dependencies: .test())
            defer { store.close() }
            let report = try #require(try store.openCompaction?.get())
            #expect(report.checkpoint?.lsn == 14)
            #expect(report.checkpoint?.throughLSN == 13)
            #expect(report.removedRecords == 13)
            #expect(store.lastLSN == 14)
            let ids = try store.snapshot("notes").rows.map(\.id)
            #expect(ids == ["n0", "n1", "n2", "n3"])
            #expect(try store.verify().problems == [])
        }
    }
}
