import Foundation
import Testing
@testable import Freshet

/// Issue 12 item 4: every input kept in `fuzz/corpus/<target>/` — seeds, and every input a
/// fuzzing run found crashing (kept under its libFuzzer name once fixed) — runs through its
/// target again here, in process, on every `swift test`.
@Suite("Fuzz corpus replay")
struct FuzzRegressionTests {
    static let corpus = FixtureServer.repositoryRoot.appendingPathComponent("fuzz/corpus")

    static func inputs(_ target: String) throws -> [(name: String, bytes: [UInt8])] {
        let folder = corpus.appendingPathComponent(target)
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map { name in
            (name, Array(try Data(contentsOf: folder.appendingPathComponent(name))))
        }
    }

    @Test("every kept input runs through its target without a crash", arguments: FuzzTargets.names)
    func replay(target: String) throws {
        let inputs = try Self.inputs(target)
        #expect(!inputs.isEmpty)
        for input in inputs { #expect(FuzzTargets.run(target, input.bytes) != nil, "\(target)/\(input.name)") }
    }

    @Test("the seeds get the answers a reader of the RFCs expects: which parsers refuse each header seed")
    func headerSeeds() throws {
        let refusals = Dictionary(uniqueKeysWithValues: try Self.inputs("headers").map { ($0.name, FuzzTargets.headers($0.bytes)) })
        // Retry-After, HTTP-date and entity tag are tried on each; a date is both a date and a Retry-After.
        #expect(refusals == ["asctime": 1, "cache-control": 3, "etag": 2, "imf-fixdate": 1, "link": 3, "retry-seconds": 2, "rfc850": 1])
    }

    @Test("a row seed of the right shape is accepted by its own resource and refused by the other two; a sealed record decodes")
    func otherSeeds() throws {
        let rows = Dictionary(uniqueKeysWithValues: try Self.inputs("rows").map { ($0.name, FuzzTargets.rows($0.bytes)) })
        #expect(rows == ["data-list": 2, "document": 2, "pokeapi-list": 2])
        // Each refused unsealed, decoded sealed.
        let records = Dictionary(uniqueKeysWithValues: try Self.inputs("record").map { ($0.name, FuzzTargets.record($0.bytes)) })
        #expect(records == ["evicted-unsealed": 1, "invalidated-unsealed": 1])
        #expect(FuzzTargets.jsonLines(try Self.inputs("jsonl").first { $0.name == "evicted" }?.bytes ?? []) == 1)  // the empty last line
        #expect(FuzzTargets.jsonLines(try Self.inputs("jsonl").first { $0.name == "two-lines" }?.bytes ?? []) == 1)  // the empty last line
        #expect(FuzzTargets.run("no-such-target", []) == nil)
        // The fixture server's stream is all good change messages; the malformed one has a row without an ID and data that is not JSON.
        let events = Dictionary(uniqueKeysWithValues: try Self.inputs("events").map { ($0.name, FuzzTargets.events($0.bytes)) })
        #expect(events == ["fixture-stream": 0, "malformed-crlf": 2])
    }
}
