import Foundation
import Freshet
import FreshetCommands
import Testing

extension LogToolTests {
    @Suite("freshet stats")
    struct StatsTests {
        @Test("stats counts records by kind and collection, pending mutations, and reads LMDB's sizes")
        func statistics() async throws {
            try await withRecordedRun { directory, _ in
                var configuration = Configuration(durability: .relaxed)
                configuration.sendsMutations = false
                let store = try Store(directory: directory, configuration: configuration, create: false)
                let s = try store.statistics()
                store.close()
                #expect(s.records == 10)
                #expect(s.unreadableRecords == 0)
                #expect(s.recordsByKind == ["fetched": 1, "notModified": 1, "localWrite": 1, "mutationProposed": 3,
                                            "mutationConfirmed": 1, "mutationRolledBack": 1, "invalidated": 1, "fetchFailed": 1])
                #expect(s.oldest?.lsn == 1)
                #expect(s.newest?.lsn == 10)
                #expect(s.newest?.time == Date(timeIntervalSince1970: 1_767_225_730))
                #expect(s.pendingMutations == 1)
                #expect(s.collections.map(\.name).sorted() == ["favourites", "todos"])
                #expect(s.collections.first?.name == "todos")
                #expect(s.collections.first { $0.name == "todos" }?.rows == 3)
                #expect(s.entriesByDatabase["log"] == 10)
                #expect(s.pageSize > 0)
                #expect(s.usedPages > 0)
                #expect(s.fileBytes >= s.usedPages * s.pageSize)
                #expect(s.activeReaders == 0)

                let run = runTool(["stats", directory.path, "--json"])
                #expect(run.status == 0)
                let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.joined().utf8)) as? [String: Any])
                #expect(object["records"] as? Int == 10)
                #expect(object["pendingMutations"] as? Int == 1)
                #expect((object["newest"] as? [String: Any])?["time"] as? String == "2026-01-01T00:02:10.000Z")
            }
        }
    }
}
