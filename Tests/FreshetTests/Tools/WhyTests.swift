import Foundation
import Freshet
import FreshetCommands
import FreshetHTTP
import FreshetTesting
import Testing

extension LogToolTests {
    @Suite("freshet why")
    struct WhyTests {
        /// A store on a test clock (from 2026-01-01T00:00:00Z, maxAge 60 s, mutations not sent)
        /// in a temporary directory, for `body` to write and close before it judges.
        func withWhyStore(_ body: (URL, Store, FreshetTesting.TestClock) async throws -> Void) async throws {
            try await withTemporaryDirectory { directory in
                let clock = FreshetTesting.TestClock()
                var configuration = Configuration.test(freshness: .maxAge(.seconds(60)))
                configuration.sendsMutations = false
                let store = try Store(directory: directory, configuration: configuration,
                                      dependencies: .test(clock: clock, transport: ScriptedTransport(clock: clock)))
                try await body(directory, store, clock)
            }
        }

        /// One collection per situation, written on a test clock starting at 2026-01-01T00:00:00Z.
        func withSituations(_ body: (URL, Date) async throws -> Void) async throws {
            try await withWhyStore { directory, store, clock in
                for name in ["fresh", "stale", "failing", "offline", "invalidated", "renewed", "masked"] {
                    try await store.append(replace(rows("1", "2")), to: name)                                // LSN 1…7 at +0 s
                }
                await clock.advance(by: .seconds(5))
                try await store.invalidate("invalidated", reason: "pulled to refresh")                    // LSN 8 at +5 s
                try await store.append(.fetchFailed(.init(url: "http://h/failing", reason: "httpStatus", status: 500, message: "answered 500")), to: "failing") // 9
                try await store.append(.fetchFailed(.init(url: "http://h/offline", reason: "cannotConnect", message: "connection refused")), to: "offline")  // 10
                await clock.advance(by: .seconds(45))
                try await store.append(.fetchFailed(.init(url: "http://h/failing", reason: "httpStatus", status: 503, message: "answered 503", attempt: 2)), to: "failing") // 11
                try await store.append(.notModified(.init(response: response(etag: #""e1""#))), to: "renewed")  // LSN 12 at +50 s
                try await store.append(.fetched(.init(placement: .replace, rows: rows("1"), response: response(cacheControl: "no-cache"))), to: "nocache") // 13
                let edit = Mutation(name: "rename", ops: [.upsert(row("1", "renamed"), in: "masked")], request: .init(method: .patch, path: "/masked/1"))
                _ = try await store.mutate(edit)                                                           // LSN 14
                store.close()
                try await body(directory, clock.start)
            }
        }

        func diagnose(_ directory: URL, _ collection: String, at now: Date, policy: FreshnessPolicy = .maxAge(.seconds(60))) throws -> Diagnosis {
            var configuration = Configuration(durability: .relaxed)
            configuration.sendsMutations = false
            let store = try Store(directory: directory, configuration: configuration, create: false)
            defer { store.close() }
            return try store.why(collection, now: now, policy: policy)
        }

        @Test("an invalidation inside a run of failures does not end the run: failing since its first failure, not 'or earlier'")
        func failingRunAcrossInvalidation() async throws {
            try await withWhyStore { directory, store, clock in
                try await store.append(replace(rows("1")), to: "t")                                                   // LSN 1 at +0 s
                await clock.advance(by: .seconds(5))
                try await store.append(.fetchFailed(.init(url: "http://h/t", reason: "httpStatus", status: 503, message: "answered 503")), to: "t") // 2 at +5 s
                try await store.invalidate("t", reason: "pulled to refresh")                                          // 3
                await clock.advance(by: .seconds(5))
                try await store.append(.fetchFailed(.init(url: "http://h/t", reason: "httpStatus", status: 503, message: "answered 503", attempt: 2)), to: "t") // 4 at +10 s
                try await store.invalidate("t", reason: "pulled again")                                               // 5
                store.close()
                let d = try diagnose(directory, "t", at: clock.start.addingTimeInterval(20))
                #expect(d.verdict == .failing)
                #expect(d.summary == "failing since 2026-01-01T00:00:05.000Z (LSN 2): 2 failed attempts, last httpStatus 503: answered 503; showing rows last synced at 2026-01-01T00:00:00.000Z; invalidated at 2026-01-01T00:00:10.000Z and not fetched since")
            }
        }

        @Test("why gives the right verdict for each situation, and agrees with the snapshot status")
        func verdicts() async throws {
            try await withSituations { directory, start in
                let t = start.addingTimeInterval(80)
                let cases: [(String, Diagnosis.Verdict, String)] = [
                    ("never", .neverFetched, "empty"),
                    ("stale", .staleByAge, "stale"),
                    ("failing", .failing, "failed (httpStatus 503), last synced 2026-01-01T00:00:00.000Z"),
                    ("offline", .offline, "stale"),   // offline is paused, not failed: the summary follows the query state
                    ("invalidated", .invalidated, "stale"),
                    ("renewed", .renewedBy304, "fresh"),
                ]
                for (collection, verdict, status) in cases {
                    let d = try diagnose(directory, collection, at: t)
                    #expect(d.verdict == verdict, "\(collection)")
                    #expect(d.status.description == status, "\(collection)")
                }
                let fresh = try diagnose(directory, "fresh", at: start.addingTimeInterval(30))
                #expect(fresh.verdict == .fresh)
                #expect(fresh.summary == "fresh: fresh for 30 s more (maxAge 60 s, age 30 s); last validated by a 200 at 2026-01-01T00:00:00.000Z (LSN 1)")
                #expect(try diagnose(directory, "stale", at: t).summary == "stale by age: stale for 20 s (maxAge 60 s, age 80 s); last validated by a 200 at 2026-01-01T00:00:00.000Z (LSN 2)")
                #expect(try diagnose(directory, "failing", at: t).summary == "failing since 2026-01-01T00:00:05.000Z (LSN 9): 2 failed attempts, last httpStatus 503: answered 503; showing rows last synced at 2026-01-01T00:00:00.000Z; stale for 20 s (maxAge 60 s, age 80 s)")
                #expect(try diagnose(directory, "offline", at: t).summary == "offline since 2026-01-01T00:00:05.000Z (LSN 10): 1 failed attempt, last cannotConnect: connection refused; serving rows last synced at 2026-01-01T00:00:00.000Z while offline; stale for 20 s (maxAge 60 s, age 80 s)")
                #expect(try diagnose(directory, "invalidated", at: t).summary == "invalidated at 2026-01-01T00:00:05.000Z (LSN 8) and not fetched since; last validated by a 200 at 2026-01-01T00:00:00.000Z (LSN 5)")
                #expect(try diagnose(directory, "renewed", at: t).summary == "fresh, renewed by a 304: fresh for 30 s more (maxAge 60 s, age 30 s); last validated by a 304 at 2026-01-01T00:00:50.000Z (LSN 12)")
                let masked = try diagnose(directory, "masked", at: start.addingTimeInterval(50))
                #expect(masked.verdict == .fresh)
                #expect(masked.maskingMutations.map(\.lsn) == [14])
                #expect(masked.summary.hasSuffix("; 1 pending mutation (rename \(masked.maskingMutations[0].id), LSN 14) masks the server's rows"))
                #expect(masked.timeline.map(\.lsn) == [7, 14])
                let noCache = try diagnose(directory, "nocache", at: start.addingTimeInterval(51), policy: .http)
                #expect(noCache.verdict == .noStoreOrNoCache)
                #expect(noCache.summary == "stale: Cache-Control no-cache: revalidate every time (RFC 9111 §5.2.2.4); last validated by a 200 at 2026-01-01T00:00:50.000Z (LSN 13)")
            }
        }

        @Test("why --lsn judges the state after that record at its time; the command prints verdict, policy and timeline")
        func command() async throws {
            try await withSituations { directory, _ in
                let run = runTool(["why", directory.path, "invalidated", "--lsn", "7", "--policy", "maxAge=60"])
                #expect(run.status == 0)
                #expect(run.stderr == [])
                #expect(run.stdout.first == "invalidated: fresh: fresh for 60 s more (maxAge 60 s, age 0 s); last validated by a 200 at 2026-01-01T00:00:00.000Z (LSN 5)")
                #expect(run.stdout.dropFirst().first == "  judged at 2026-01-01T00:00:00.000Z under policy maxAge=60 (given by --policy); status fresh")
                let json = runTool(["why", directory.path, "failing", "--lsn", "11", "--json"])
                let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.joined().utf8)) as? [String: Any])
                #expect(object["verdict"] as? String == "failing")
                #expect(object["policy"] as? String == "http")
                #expect((object["timeline"] as? [[String: Any]])?.map { $0["lsn"] as? Int } == [3, 9, 11])
                let past = runTool(["why", directory.path, "failing", "--lsn", "99"])
                #expect(past.status == 2)
                #expect(past.stderr == ["freshet: LSN 99 is past the end of the log of \(directory.path) (last LSN 14)"])
            }
        }
    }
}

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Collects the `class` attribute of every element of an XML document.
final class SVGClasses: NSObject, XMLParserDelegate {
    var classes: [String] = []
    var root: String?

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        if root == nil { root = name }
        if let c = attributes["class"] { classes.append(c) }
    }
}

extension LogToolTests.WhyTests {
    @Test("why --svg writes the timeline as SVG: one mark per record, the bands and the moment asked about")
    func svg() async throws {
        try await withSituations { directory, _ in
            let file = directory.appendingPathExtension("svg")
            defer { try? FileManager.default.removeItem(at: file) }
            let run = runTool(["why", directory.path, "failing", "--lsn", "11", "--policy", "maxAge=60", "--svg", file.path])
            #expect(run.status == 0)
            let parser = XMLParser(data: try Data(contentsOf: file))
            let collected = SVGClasses()
            parser.delegate = collected
            #expect(parser.parse())
            #expect(collected.root == "svg")
            #expect(collected.classes.filter { $0.hasPrefix("mark ") } == ["mark fetched", "mark fetchFailed", "mark fetchFailed"])
            #expect(collected.classes.contains("band fresh"))
            #expect(collected.classes.contains("now"))
        }
    }
}
