import Foundation
import ProcessSupport
import Freshet
import FreshetCommands
import Testing
import TestSupport

extension LogToolTests {
    /// Findings 1, 2, 3, 5, 9, 10 and 12 of the second new user's trial (issue 8): output that
    /// cannot be written, `why --svg` writing over the store, CRLF files, an import that fails
    /// after creating the store, `replay --to 0`, the mode of import's directories, and small edges.
    @Suite("freshet after the second new user's trial")
    struct SecondTrialTests {
        /// Runs `body` with a new empty temporary directory (removed afterwards).
        func withScratchDirectory<R>(_ body: (URL) async throws -> R) async throws -> R {
            try await withTemporaryDirectory { directory in
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                return try await body(directory)
            }
        }

        /// Runs the built `freshet` with standard output to `/dev/full`; its status and standard error.
        func runToFullDisk(_ arguments: [String]) throws -> (status: Int32, stderr: [String]) {
            let process = try SpawnedProcess([try LiveStoreTests.executable().path] + arguments,
                                             standardOutput: .file("/dev/full"), standardError: .pipe)
            let stderr = process.readErrorLines()
            return (process.wait().status, stderr)
        }

        @Test("every tool exits 2 with one line when its standard output cannot be written (/dev/full)", arguments: [
            ["export"], ["dump"], ["dump", "--json"], ["replay", "--json"], ["stats"], ["verify"], ["why", "favourites"],
        ])
        func fullDisk(command: [String]) async throws {
            try await offPool {
                try await withDumpableStore { directory in
                    let run = try runToFullDisk([command[0], directory.path] + command.dropFirst())
                    #expect(run.status == 2)
                    #expect(run.stderr == ["freshet: cannot write the output: No space left on device"])
                }
            }
        }

        @Test("the output writer keeps its bytes in order across flushes and reports the first failed write")
        func outputWriter() async throws {
            try await withScratchDirectory { (directory: URL) async throws in
                let path = directory.appendingPathComponent("out").path
                let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
                #expect(fd >= 0)
                let writer = OutputWriter(fileDescriptor: fd, capacity: 4)
                for line in ["one", "two", "three"] { writer.writeLine(line) }
                #expect(writer.flush() == nil)
                close(fd)
                #expect(try String(contentsOfFile: path, encoding: .utf8) == "one\ntwo\nthree\n")

                let full = open("/dev/full", O_WRONLY)
                #expect(full >= 0)
                defer { close(full) }
                let failing = OutputWriter(fileDescriptor: full)
                failing.writeLine("lost")
                #expect(failing.failure == nil)
                #expect(failing.flush() == ENOSPC)
                failing.writeLine("after")
                #expect(failing.flush() == ENOSPC)
                #expect(OutputWriter.failureText(ENOSPC) == "cannot write the output: No space left on device")
            }
        }

        @Test("why --svg refuses a path inside the store, however it is spelled, and leaves the store as it was")
        func svgInsideStore() async throws {
            try await withDumpableStore { store in
                try await withScratchDirectory { outside in
                    let data = store.appendingPathComponent("data.mdb")
                    let before = try Data(contentsOf: data)
                    let link = outside.appendingPathComponent("link.svg").path
                    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: data.path)
                    let dangling = outside.appendingPathComponent("dangling.svg").path
                    try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: store.appendingPathComponent("new.svg").path)
                    let dotted = store.path + "/../" + store.lastPathComponent + "/x.svg"
                    for path in [data.path, link, dangling, dotted] {
                        let run = runTool(["why", store.path, "favourites", "--svg", path])
                        #expect(run.status == 2)
                        #expect(run.stdout == [])
                        #expect(run.stderr == ["freshet: cannot write \(path): it is inside the store directory \(store.path); give a path outside it"])
                    }
                    // The store directory itself is a directory first of all.
                    let run = runTool(["why", store.path, "favourites", "--svg", store.path])
                    #expect(run.status == 2)
                    #expect(run.stderr == ["freshet: cannot write \(store.path): it is a directory, not a file"])
                    #expect(try Data(contentsOf: data) == before)
                    #expect(!FileManager.default.fileExists(atPath: store.appendingPathComponent("new.svg").path))
                    #expect(!FileManager.default.fileExists(atPath: store.appendingPathComponent("x.svg").path))
                    #expect(runTool(["verify", store.path]).status == 0)
                }
            }
        }

        @Test("why --svg writes through a symbolic link like a shell redirect, and names file errors in plain words")
        func svgThroughPath() async throws {
            try await withDumpableStore { store in
                try await withScratchDirectory { outside in
                    let plain = outside.appendingPathComponent("plain.svg").path
                    // At an LSN, so both runs judge at the same time and draw the same picture.
                    #expect(runTool(["why", store.path, "favourites", "--lsn", "1", "--svg", plain]).status == 0)
                    let svg = try String(contentsOfFile: plain, encoding: .utf8)
                    #expect(svg.hasPrefix(#"<?xml version="1.0" encoding="UTF-8"?>"#))
                    #expect(try FileManager.default.attributesOfItem(atPath: plain)[.posixPermissions] as? Int == 0o644 & ~Int(currentUmask()))

                    let target = outside.appendingPathComponent("target.svg").path
                    try Data("old and longer than nothing".utf8).write(to: URL(fileURLWithPath: target))
                    let link = outside.appendingPathComponent("link.svg").path
                    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
                    #expect(runTool(["why", store.path, "favourites", "--lsn", "1", "--svg", link]) == ToolRun(status: 0, stdout: runTool(["why", store.path, "favourites", "--lsn", "1"]).stdout, stderr: []))
                    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
                    #expect(try String(contentsOfFile: target, encoding: .utf8) == svg)

                    #expect(runTool(["why", store.path, "favourites", "--svg", outside.path]) == ToolRun(status: 2, stdout: [], stderr: [
                        "freshet: cannot write \(outside.path): it is a directory, not a file",
                    ]))
                    let missing = outside.appendingPathComponent("none/a.svg").path
                    #expect(runTool(["why", store.path, "favourites", "--svg", missing]) == ToolRun(status: 2, stdout: [], stderr: [
                        "freshet: cannot write \(missing): No such file or directory",
                    ]))
                }
            }
        }

        /// The process's umask (read by setting it and back).
        func currentUmask() -> mode_t {
            let mask = umask(0o022)
            umask(mask)
            return mask
        }

        @Test("import names a file it cannot read in plain words: missing, a directory")
        func importFileErrors() async throws {
            try await withScratchDirectory { directory in
                let store = directory.appendingPathComponent("store").path
                let missing = directory.appendingPathComponent("none.jsonl").path
                #expect(runTool(["import", store, missing]) == ToolRun(status: 2, stdout: [], stderr: ["freshet: cannot read \(missing): No such file or directory"]))
                #expect(runTool(["import", store, directory.path]) == ToolRun(status: 2, stdout: [], stderr: ["freshet: cannot read \(directory.path): it is a directory, not a JSON Lines file"]))
                #expect(runTool(["import", store, "/dev/null"]) == ToolRun(status: 2, stdout: [], stderr: ["freshet: /dev/null: nothing to import: no record in the file; no store was created"]))
                #expect(!FileManager.default.fileExists(atPath: store))
            }
        }

        @Test("import reads a CRLF copy of a real export (every line ends in \\r\\n) into the same store")
        func crlfImport() async throws {
            try await withRecordedRun { directory, _ in
                let export = runTool(["export", directory.path])
                #expect(export.status == 0)
                try await withScratchDirectory { scratch in
                    let file = scratch.appendingPathComponent("crlf.jsonl").path
                    try Data(export.stdout.map { $0 + "\r\n" }.joined().utf8).write(to: URL(fileURLWithPath: file))
                    let copy = scratch.appendingPathComponent("store").path
                    let run = runTool(["import", copy, file])
                    #expect(run == ToolRun(status: 0, stdout: ["imported \(export.stdout.count) records through LSN \(export.stdout.count) into \(copy)"], stderr: []))
                    #expect(runTool(["export", copy]).stdout == export.stdout)
                    #expect(runTool(["replay", copy, "--json"]).stdout == runTool(["replay", directory.path, "--json"]).stdout)
                    #expect(runTool(["verify", copy]).status == 0)
                }
            }
        }

        /// A real export with the `mutationProposed` line of a confirmed mutation removed and
        /// the later LSNs renumbered: the confirmation's line, its mutation ID, and the file.
        static func orphanConfirmation(_ lines: [String]) throws -> (line: Int, id: String, text: [String]) {
            func object(_ line: String) throws -> [String: Any] {
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            }
            func mutationID(_ line: String) throws -> String? {
                (try object(line)["event"] as? [String: Any])?["mutationID"] as? String
            }
            let confirmed = try #require(try lines.firstIndex { try object($0)["kind"] as? String == "mutationConfirmed" })
            let id = try #require(try mutationID(lines[confirmed]))
            let proposed = try #require(try lines.firstIndex { try object($0)["kind"] as? String == "mutationProposed" && mutationID($0) == id })
            var text = lines
            text.remove(at: proposed)
            for i in proposed..<text.count {
                let lsn = i + 2
                #expect(text[i].hasPrefix(#"{"lsn":\#(lsn),"#))
                text[i] = #"{"lsn":\#(lsn - 1),"# + text[i].dropFirst(#"{"lsn":\#(lsn),"#.count)
            }
            return (confirmed, id, text)
        }

        @Test("an import the fold refuses (a confirmation never proposed) names the line and leaves no store; a retry works", arguments: [false, true])
        func orphanConfirmationLeavesNothing(directoryExists: Bool) async throws {
            try await withRecordedRun { directory, _ in
                let export = runTool(["export", directory.path]).stdout
                let orphan = try Self.orphanConfirmation(export)
                try await withScratchDirectory { scratch in
                    let file = scratch.appendingPathComponent("orphanconfirm.jsonl").path
                    try Data(orphan.text.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
                    let store = scratch.appendingPathComponent("parent/st-orphanconfirm").path
                    if directoryExists { try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true) }
                    #expect(runTool(["import", store, file]) == ToolRun(status: 2, stdout: [], stderr: [
                        "freshet: \(file): line \(orphan.line): mutationConfirmed for mutation \(orphan.id), which was never proposed; no store was created",
                    ]))
                    if directoryExists {
                        #expect(try FileManager.default.contentsOfDirectory(atPath: store) == [])
                    } else {
                        #expect(!FileManager.default.fileExists(atPath: scratch.appendingPathComponent("parent").path))
                    }
                    try Data(export.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
                    #expect(runTool(["import", store, file]) == ToolRun(status: 0, stdout: ["imported \(export.count) records through LSN \(export.count) into \(store)"], stderr: []))
                    #expect(runTool(["verify", store]).status == 0)
                }
            }
        }

        @Test("import creates the store directory and the parents it creates owner-only (0700)")
        func importDirectoryMode() async throws {
            let lines = [NewUserTrialTests.fetched(1, micros: NewUserTrialTests.base, collection: #""a""#, rows: #"[{"id":"1","json":"1"}]"#)]
            try await NewUserTrialTests().withFile(lines.joined()) { file, base in
                let store = base.appendingPathComponent("a/b/store")
                #expect(runTool(["import", store.path, file]).status == 0)
                for path in [base.path, base.appendingPathComponent("a").path, base.appendingPathComponent("a/b").path, store.path] {
                    let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
                    #expect(mode == 0o700, "\(path)")
                }
            }
        }

        @Test("import refuses a time outside the years 0001 to 9999 and a long row ID in one short line")
        func importEdges() async throws {
            let oldest = NewUserTrialTests.fetched(1, micros: Int64.min, collection: #""a""#, rows: #"[{"id":"1","json":"1"}]"#)
            try await NewUserTrialTests().withFile(oldest) { file, store in
                #expect(runTool(["import", store.path, file]).stderr == [
                    "freshet: \(file): line 1: micros -9223372036854775808 is outside the years 0001 to 9999 (-62135596800000000 ... 253402300799999999)",
                ])
            }
            let first = NewUserTrialTests.fetched(1, micros: -62_135_596_800_000_000, collection: #""a""#, rows: #"[{"id":"1","json":"1"}]"#)
            try await NewUserTrialTests().withFile(first) { file, store in
                #expect(runTool(["import", store.path, file]).status == 0)
                #expect(runTool(["dump", store.path]).stdout.first?.hasPrefix("     1  0001-01-01T00:00:00.000Z  fetched") == true)
            }
            let long = NewUserTrialTests.fetched(1, micros: NewUserTrialTests.base, collection: #""a""#, rows: #"[{"id":"\#(String(repeating: "x", count: 100_000))","json":"1"}]"#)
            try await NewUserTrialTests().withFile(long) { file, store in
                #expect(runTool(["import", store.path, file]).stderr == [
                    #"freshet: \#(file): line 1: row ID "\#(String(repeating: "x", count: 64))…" (100000 characters) in a must be 1 to 250 bytes of UTF-8"#,
                ])
            }
        }

        @Test("an error line holding a long string the library did not shorten is cut in the middle, with the length left out")
        func longErrorLine() async throws {
            let kind = String(repeating: "k", count: 100_000)
            let line = #"{"lsn":1,"micros":0,"kind":"\#(kind)","collection":"a","event":{}}"#
            try await NewUserTrialTests().withFile(line) { file, store in
                let run = runTool(["import", store.path, file])
                #expect(run.status == 2)
                let message = "line 1: unknown event kind \(kind.debugDescription); this Freshet knows \(EventKind.allCases.map(\.name).joined(separator: ", "))"
                #expect(run.stderr == ["freshet: \(file): \(message.prefix(600))… (\(message.count - 800) characters left out) …\(message.suffix(200))"])
                #expect(run.stderr.first?.count ?? 0 < 1_000 + file.count)
            }
        }

        @Test("usage errors: LSN 0 or past Int64.max, an option given twice, an empty collection name or store directory, surplus arguments, empty redacted names", arguments: [
            (["replay", "d", "--to", "0"], "--to needs an LSN from 1 (LSN 0 is before the first record), got 0"),
            (["dump", "d", "--to", "0"], "--to needs an LSN from 1 (LSN 0 is before the first record), got 0"),
            (["why", "d", "c", "--lsn", "0"], "--lsn needs an LSN from 1 (LSN 0 is before the first record), got 0"),
            (["replay", "d", "--to", "00"], "--to needs an LSN from 1 (LSN 0 is before the first record), got 00"),
            (["replay", "d", "--to", "+5"], #"--to needs an LSN (a whole number), got "+5""#),
            (["dump", "d", "--from", "+1"], #"--from needs an LSN (a whole number), got "+1""#),
            (["replay", "d", "--to", "99999999999999999999"], "--to 99999999999999999999 is out of range: an LSN is at most 9223372036854775807"),
            (["replay", "d", "--to", "9223372036854775808"], "--to 9223372036854775808 is out of range: an LSN is at most 9223372036854775807"),
            (["dump", "d", "--from", "0"], "--from needs an LSN from 1 (LSN 0 is before the first record), got 0"),
            (["export", "d", "--from", "0"], "--from needs an LSN from 1 (LSN 0 is before the first record), got 0"),
            (["import", "d", "f", "--through", "0"], "--through needs an LSN from 1 (LSN 0 is before the first record), got 0"),
            (["export", "d", "--redact", ","], #"--redact needs field names separated by commas, got ",""#),
            (["export", "d", "--redact", "name,,id"], #"--redact needs field names separated by commas, got "name,,id""#),
            (["dump", ""], #"dump: the store directory is empty (""); give a path, . for the current directory"#),
            (["why", "", "c"], #"why: the store directory is empty (""); give a path, . for the current directory"#),
            (["import", "", "f"], #"import: the store directory is empty (""); give a path, . for the current directory"#),
            (["why", "d", "a", "b"], #"why: unexpected argument "b""#),
            (["import", "d", "f", "g"], #"import: unexpected argument "g""#),
            (["dump", "d", "e"], #"dump: unexpected argument "e""#),
            (["why", "d", "c", "--svg", ""], #"--svg needs a file name, got """#),
            (["replay", "d", "--to", "5", "--to", "6"], "replay: --to given twice"),
            (["replay", "d", "--to", "5", "--at", "2026-01-01T00:00:00Z"], "replay: give --to or --at once, not both"),
            (["dump", "d", "--to", "5", "--to", "6"], "dump: --to given twice"),
            (["why", "d", "c", "--svg", "a", "--svg", "b"], "why: --svg given twice"),
            (["import", "d", "f", "--through", "1", "--through", "2"], "import: --through given twice"),
            (["why", "d", ""], #"collection name "" must be 1 to 200 bytes of UTF-8 without control characters"#),
            (["dump", "d", "--collection", ""], #"collection name "" must be 1 to 200 bytes of UTF-8 without control characters"#),
            (["replay", "d", "--collection", ""], #"collection name "" must be 1 to 200 bytes of UTF-8 without control characters"#),
        ])
        func usageErrors(arguments: [String], message: String) {
            #expect(runTool(arguments) == ToolRun(status: 2, stdout: [], stderr: ["freshet: \(message)"]))
        }

        @Test("help --help prints help's own usage and exits 0")
        func helpHelp() throws {
            let text = try #require(Command.helpTexts["help"])
            #expect(runTool(["help", "--help"]) == ToolRun(status: 0, stdout: [text], stderr: []))
            #expect(runTool(["help", "-h"]) == ToolRun(status: 0, stdout: [text], stderr: []))
        }

        @Test("compact names a missing path or a file in the words the other tools use")
        func compactSameWords() async throws {
            try await withScratchDirectory { directory in
                let missing = directory.appendingPathComponent("none").path
                let file = directory.appendingPathComponent("file").path
                try Data("x".utf8).write(to: URL(fileURLWithPath: file))
                for (path, reason) in [(missing, "does not exist"), (file, "is a file, not a store directory"), (directory.path, "holds no Freshet store (no data.mdb)")] {
                    let expected = ToolRun(status: 2, stdout: [], stderr: ["freshet: cannot open store \(path): \(path) \(reason)"])
                    #expect(runTool(["compact", path]) == expected)
                    #expect(runTool(["dump", path]) == expected)
                }
                #expect(!FileManager.default.fileExists(atPath: missing))
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["file"])
            }
        }

        @Test("dump --collection of a collection with no record in the range says so", arguments: ["favourites", "fav*"])
        func dumpNoRecordInRange(value: String) async throws {
            try await withDumpableStore { directory in
                #expect(runTool(["dump", directory.path, "--from", "2", "--collection", value]) == ToolRun(status: 0, stdout: [], stderr: [
                    "freshet: no record of \(value.debugDescription) in LSNs 2 ... 5 of \(directory.path)",
                ]))
                #expect(runTool(["dump", directory.path, "--from", "2", "--to", "4", "--collection", value]).stderr == [
                    "freshet: no record of \(value.debugDescription) in LSNs 2 ... 4 of \(directory.path)",
                ])
                #expect(runTool(["dump", directory.path, "--collection", "nothing"]).stderr == [
                    #"freshet: no collection matches "nothing" in \#(directory.path) (a prefix ends in / or *)"#,
                ])
            }
        }

        @Test("counts of one are singular: verify's ok line, stats' collection line, import")
        func singular() async throws {
            let lines = [NewUserTrialTests.fetched(1, micros: NewUserTrialTests.base, collection: #""a""#, rows: #"[{"id":"1","json":"1"}]"#)]
            try await NewUserTrialTests().withFile(lines.joined()) { file, store in
                #expect(runTool(["import", store.path, file]).stdout == ["imported 1 record through LSN 1 into \(store.path)"])
                let verify = runTool(["verify", store.path])
                #expect(verify.stdout.count == 1)
                #expect(verify.stdout.first?.hasPrefix("ok: 1 record through LSN 1 replay to the stored state (") == true)
                #expect(runTool(["stats", store.path]).stdout.last?.hasPrefix("  a  1 record  ") == true)
                #expect(runTool(["stats", store.path]).stdout.last?.contains(" log bytes  1 row  ") == true)
            }
        }
    }
}
