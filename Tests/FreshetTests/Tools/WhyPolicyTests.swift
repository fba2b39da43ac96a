import Foundation
@testable import Freshet
import FreshetCommands
import FreshetTesting
import Testing

extension LogToolTests {
    @Suite("freshet why: the policy recorded in the log")
    struct WhyPolicyTests {
        func open(_ directory: URL) throws -> Store {
            var configuration = Configuration(durability: .relaxed) // default policy: .http
            configuration.sendsMutations = false
            return try Store(directory: directory, configuration: configuration, create: false)
        }

        @Test("a refresh records its freshness policy and retry settings; why judges under them and names the record, --policy overrides")
        func recordedPolicy() async throws {
            try await withRecordedRun { directory, _ in
                let store = try open(directory)
                defer { store.close() }
                var fetched: [ReadPolicy?] = []
                try store.readLog { entry in
                    if case .record(let r) = entry { fetched.append(r.event.readPolicy) }
                    return true
                }
                let expected = ReadPolicy(freshness: recordedRunPolicy, retry: Configuration.test().retry)
                // LSN 1 fetched and LSN 2 notModified come from refresh; LSN 9's fetchFailed was appended by hand.
                #expect(fetched == [expected, expected, nil, nil, nil, nil, nil, nil, nil, nil])

                let recorded = try store.why("todos", at: .lsn(2))
                #expect(recorded.policy == .maxAge(.seconds(300)))
                #expect(recorded.policySource == .recorded(lsn: 2, retry: Configuration.test().retry))
                #expect(recorded.verdict == .renewedBy304)
                #expect(recorded.summary == "fresh, renewed by a 304: fresh for 5.0 min more (maxAge 5.0 min, age 0 s); last validated by a 304 at 2026-01-01T00:00:30.000Z (LSN 2)")

                let overridden = try store.why("todos", at: .lsn(2), policy: .always)
                #expect(overridden.policySource == .given)
                #expect(overridden.verdict == .staleByAge)

                let none = try store.why("favourites", at: .lsn(3))
                #expect(none.policySource == .storeDefault)
                #expect(none.policy == .http)
            }
        }

        @Test("the why command prints which policy the verdict used: recorded, given, or the store's default")
        func command() async throws {
            try await withRecordedRun { directory, _ in
                let recorded = runTool(["why", directory.path, "todos", "--lsn", "2"])
                #expect(recorded.status == 0)
                #expect(recorded.stdout.dropFirst().first == "  judged at 2026-01-01T00:00:30.000Z under policy maxAge=300 (recorded at LSN 2; retries: 3 attempts, base delay 1 s, at most 30 s); status fresh")
                let given = runTool(["why", directory.path, "todos", "--lsn", "2", "--policy", "manual"])
                #expect(given.stdout.dropFirst().first == "  judged at 2026-01-01T00:00:30.000Z under policy manual (given by --policy); status fresh")
                let json = runTool(["why", directory.path, "todos", "--lsn", "2", "--json"])
                let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.joined().utf8)) as? [String: Any])
                #expect(object["policy"] as? String == "maxAge=300")
                let source = try #require(object["policySource"] as? [String: Any])
                #expect(source["from"] as? String == "log")
                #expect(source["lsn"] as? Int == 2)
                #expect(source["maxAttempts"] as? Int == 3)
            }
        }

        @Test("replay judges each collection under the policy its last refresh recorded")
        func replayUsesRecordedPolicy() async throws {
            try await withRecordedRun { directory, checkpoints in
                let store = try open(directory)
                defer { store.close() }
                let todos = try #require(checkpoints.first { $0.step == "304" }?.snapshots.first { $0.collection == "todos" })
                let replayed = try store.replay(to: .lsn(2), collections: .name("todos"))
                #expect(replayed.snapshots == [todos])
            }
        }

        @Test("the read policy round-trips through the record codec, and a record without it (an older log) decodes with none")
        func codec() throws {
            let policy = ReadPolicy(freshness: .maxAge(.milliseconds(1500)),
                                    retry: Configuration.RetryPolicy(maxAttempts: 5, baseDelay: .milliseconds(250), maxDelay: .seconds(8), jitter: 0.5, maxRetryAfter: .seconds(60)))
            let response = ResponseInfo(url: "http://h/x", status: 200)
            for event in [Event.fetched(.init(placement: .replace, rows: [], response: response, readPolicy: policy)),
                          .notModified(.init(response: response, readPolicy: policy)),
                          .fetchFailed(.init(url: "http://h/x", reason: "timedOut", message: "timed out", readPolicy: policy))] {
                let decoded = try Event.decode(kind: event.kind, payload: event.encodedPayload())
                #expect(decoded == event)
                #expect(decoded.readPolicy == policy)
            }
            // Field 9 as docs/log-format.md §6.11 spells it (docs/examples/read_log.py writes the same bytes).
            let field9: [UInt8] = [0x09, 0x22, 0x01, 0x01, 0x02, 0x02, 0x04, 0xC0, 0x8D, 0xB7, 0x01, 0x03, 0x01, 0x05, 0x04, 0x03, 0xA0, 0xC2, 0x1E,
                                   0x05, 0x04, 0x80, 0xC8, 0xD0, 0x07, 0x06, 0x03, 0xA0, 0xC2, 0x1E, 0x07, 0x04, 0x80, 0x9C, 0x9C, 0x39]
            #expect(Array(Event.fetched(.init(placement: .replace, rows: [], response: response, readPolicy: policy)).encodedPayload().suffix(field9.count)) == field9)
            let old = Event.fetched(.init(placement: .replace, rows: [], response: response))
            #expect(try Event.decode(kind: .fetched, payload: old.encodedPayload()).readPolicy == nil)
            #expect(ReadPolicy.name(policy.freshness) == "maxAge=1.5")
        }
    }
}
