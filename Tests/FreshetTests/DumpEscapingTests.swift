import Foundation
import Freshet
@testable import FreshetCommands
import Testing

/// Row IDs, collection names, reasons and paths come from servers: `freshet dump` prints
/// them escaped, so a record is always one line and no text can drive the terminal.
@Suite("freshet dump escapes what servers send")
struct DumpEscapingTests {
    @Test("TerminalEscaping.escaped writes controls, separators, bidi marks and backslash as escapes and keeps other text",
          arguments: [
              ("plain é → …", "plain é → …"),
              ("a\u{1B}[31mred", #"a\u{1B}[31mred"#),
              ("line\nbreak", #"line\nbreak"#),
              ("carriage\rreturn", #"carriage\rreturn"#),
              ("bell\u{7}", #"bell\u{7}"#),
              ("tab\tnul\0", #"tab\tnul\0"#),
              ("del\u{7F} csi\u{9B}2J", #"del\u{7F} csi\u{9B}2J"#),
              ("sep\u{2028}\u{2029}", #"sep\u{2028}\u{2029}"#),
              ("bidi\u{202E}\u{2066}\u{200F}", #"bidi\u{202E}\u{2066}\u{200F}"#),
              (#"back\slash"#, #"back\\slash"#),
          ])
    func escapes(input: String, expected: String) {
        #expect(TerminalEscaping.escaped(input) == expected)
    }

    @Test("dump prints row IDs, a failure message and a mutation with ESC, LF, CR and BEL escaped, one line per record; --json is valid JSON Lines holding the exact strings")
    func dumpEscapesServerStrings() async throws {
        let ids = ["a\u{1B}[31m", "b\nc", "d\re", "f\u{7}"]
        try await withTemporaryDirectory { directory in
            let store = try Store(directory: directory, configuration: .test(), dependencies: .test())
            try await store.append(.fetched(.init(placement: .replace, rows: ids.map { Row(id: $0, json: Data("{}".utf8)) },
                                                  response: ResponseInfo(url: "http://h/todos", status: 200))), to: "todos")
            try await store.append(.fetchFailed(.init(url: "http://h/todos", reason: "httpStatus", status: 500, message: "boom\u{1B}]0;owned\u{7}\nfake line")), to: "todos")
            try await store.localWrite("todos", [.delete(id: "b\nc")])
            store.close()

            let run = runTool(["dump", directory.path])
            #expect(run.status == 0)
            let t = TestClock.nowISO
            #expect(run.stdout == [
                #"     1  \#(t)  fetched            todos           replace, 4 rows (a\u{1B}[31m … f\u{7}), 200, 0.0 ms, 0 bytes"#,
                #"     2  \#(t)  fetchFailed        todos           attempt 1: httpStatus 500 — boom\u{1B}]0;owned\u{7}\nfake line"#,
                #"     3  \#(t)  localWrite         todos           delete b\nc"#,
            ])
            #expect(run.stdout.allSatisfy { line in !line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) } })

            let json = runTool(["dump", directory.path, "--json"])
            #expect(json.status == 0)
            #expect(json.stdout.count == 3)
            #expect(json.stdout.allSatisfy { line in !line.unicodeScalars.contains { $0.value < 0x20 } })
            let objects = try json.stdout.map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            }
            #expect(objects[0]["rowIDs"] as? [String] == ids)
            #expect(objects[1]["message"] as? String == "boom\u{1B}]0;owned\u{7}\nfake line")
            #expect((objects[2]["ops"] as? [[String: Any]])?.first?["id"] as? String == "b\nc")
        }
    }

    @Test("a collection name with a terminal escape, read from a log, is printed escaped")
    func collectionNameEscaped() {
        let record = LogRecord(lsn: 7, timestamp: TestClock.fixed(), collection: "evil\u{1B}[2J\r", event: .invalidated(.init(reason: "x\ny")))
        #expect(Tool.textLine(record) == #"     7  \#(TestClock.nowISO)  invalidated        evil\u{1B}[2J\r  invalidated: x\ny"#)
    }
}
