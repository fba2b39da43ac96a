import Foundation
import Freshet
import FreshetCommands
@testable import FreshetLMDB
import Testing

extension LogToolTests {
    @Suite("freshet export and import")
    struct ExportImportTests {
        /// Every key and value of every named database, by database name.
        func contents(of directory: URL) throws -> [String: [[UInt8]: [UInt8]]] {
            try withRawEnvironment(directory) { env, dbs in
                try env.read { txn in
                    var all: [String: [[UInt8]: [UInt8]]] = [:]
                    for (name, db) in dbs {
                        var entries: [[UInt8]: [UInt8]] = [:]
                        try txn.forEach(db) { key, value in
                            entries[Array(key)] = Array(value)
                            return true
                        }
                        all[name] = entries
                    }
                    return all
                }
            }
        }

        @Test("export then import rebuilds the store byte for byte: same LSNs, timestamps, databases; it verifies")
        func roundTrip() async throws {
            try await withRecordedRun { directory, checkpoints in
                let export = runTool(["export", directory.path])
                #expect(export.status == 0)
                #expect(export.stderr == [])
                #expect(export.stdout.count == 10)
                try await withTemporaryDirectory { copy in
                    let file = copy.appendingPathExtension("jsonl")
                    defer { try? FileManager.default.removeItem(at: file) }
                    try Data((export.stdout.joined(separator: "\n") + "\n").utf8).write(to: file)
                    let run = runTool(["import", copy.path, file.path])
                    #expect(run.stderr == [])
                    #expect(run.stdout == ["imported 10 records through LSN 10 into \(copy.path)"])
                    #expect(try contents(of: copy) == contents(of: directory))
                    #expect(runTool(["verify", copy.path]).status == 0)
                    #expect(runTool(["export", copy.path]).stdout == export.stdout)
                    #expect(runTool(["dump", copy.path]).stdout == runTool(["dump", directory.path]).stdout)
                    _ = checkpoints
                }
            }
        }

        @Test("--redact replaces the named row fields at any depth; credential headers are always redacted")
        func redaction() async throws {
            try await withTemporaryDirectory { directory in
                let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
                let person = Row(id: "7", json: Data(#"{"contact":{"email":"ada@example.com"},"email":"ada@example.com","name":"Ada"}"#.utf8))
                try await store.localWrite("people", [.upsert(person)])
                let mutation = Mutation(name: "rename", ops: [.upsert(person, in: "people")],
                                        request: .init(method: .patch, path: "/people/7", headers: ["Authorization": "Bearer s3cret", "X-Session-Id": "abc", "Accept-Language": "en"]))
                try await store.append(.mutationProposed(.init(id: MutationID(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9))), mutation: mutation)), to: "people")
                store.close()
                let plain = runTool(["export", directory.path]).stdout.joined(separator: "\n")
                #expect(plain.contains("ada@example.com"))
                #expect(!plain.contains("s3cret"))
                #expect(!plain.contains("abc"))
                #expect(plain.contains(#""Accept-Language":"en""#))
                let redacted = runTool(["export", directory.path, "--redact", "email"])
                #expect(redacted.status == 0)
                let text = redacted.stdout.joined(separator: "\n")
                #expect(!text.contains("ada@example.com"))
                #expect(text.contains(#"{\"contact\":{\"email\":\"[redacted]\"},\"email\":\"[redacted]\",\"name\":\"Ada\"}"#))
                #expect(text.contains(#""Authorization":"[redacted]""#))
                #expect(text.contains(#""X-Session-Id":"[redacted]""#))
            }
        }

        @Test("import names the bad line: not JSON, an unknown kind, LSNs out of order; and never writes into a non-empty directory", arguments: [
            ("{\"lsn\":1,\"micros\":0,\"kind\":\"invalidated\",\"collection\":\"a\",\"event\":{}}\n{not json", #"line 2: not a JSON object ("{not json")"#),
            (#"{"lsn":1,"micros":0,"kind":"teleported","collection":"a","event":{}}"#, "line 1: unknown event kind \"teleported\"; this Freshet knows fetched, notModified, fetchFailed, changed, mutationProposed, mutationConfirmed, mutationRolledBack, invalidated, localWrite, checkpoint, evicted"),
            ("{\"lsn\":2,\"micros\":0,\"kind\":\"invalidated\",\"collection\":\"a\",\"event\":{}}\n{\"lsn\":1,\"micros\":0,\"kind\":\"invalidated\",\"collection\":\"a\",\"event\":{}}", "line 2: LSN 1 does not follow LSN 2"),
            (#"{"lsn":1,"micros":0,"kind":"fetchFailed","collection":"a","event":{"url":"u","reason":"r","message":"m"}}"#, "line 1: event: missing field attempt"),
            // A negative page index is refused, never wrapped to 0 by the unsigned encoding.
            (#"{"lsn":1,"micros":0,"kind":"fetchFailed","collection":"a","event":{"url":"u","page":-1,"reason":"r","message":"m","attempt":1}}"#, "line 1: fetchFailed for a: the page index is -1, must not be negative"),
            (#"{"lsn":1,"micros":0,"kind":"notModified","collection":"a","event":{"response":{"url":"u","status":304,"durationMicros":0,"responseBytes":0,"requestBytes":0},"page":-1}}"#,
             "line 1: notModified for a: the page index is -1, must not be negative"),
        ])
        func badLines(text: String, message: String) async throws {
            try await withTemporaryDirectory { directory in
                let file = directory.appendingPathExtension("jsonl")
                defer { try? FileManager.default.removeItem(at: file) }
                try Data(text.utf8).write(to: file)
                let run = runTool(["import", directory.path, file.path])
                #expect(run.status == 2)
                #expect(run.stderr == ["freshet: \(file.path): \(message)"])
                #expect(!FileManager.default.fileExists(atPath: directory.path))
            }
        }

        @Test("import refuses a directory that is not empty, and writes nothing there")
        func refusesExistingStore() async throws {
            try await withRecordedRun { directory, _ in
                let before = try contents(of: directory)
                let file = directory.appendingPathExtension("jsonl")
                defer { try? FileManager.default.removeItem(at: file) }
                try Data(#"{"lsn":11,"micros":0,"kind":"invalidated","collection":"a","event":{}}"#.utf8).write(to: file)
                let run = runTool(["import", directory.path, file.path])
                #expect(run.status == 2)
                #expect(run.stderr == ["freshet: \(directory.path) is not empty; import builds a new store in a new or empty directory"])
                #expect(try contents(of: directory) == before)
            }
        }
    }
}
