import Foundation
import Testing
@testable import Freshet

/// `Store.firstRepeatedID`, the page's duplicate-ID check behind `duplicateRowIDs`, against
/// the `Set<String>` it replaced, on pages built to repeat, collide and not.
@Suite("Paging: the first repeated row ID of a page")
struct PageRepeatedIDTests {
    /// The answer of the check it replaced: the first row whose ID an earlier row has.
    static func bySet(_ rows: [Row]) -> Int? {
        var ids = Set<String>()
        for (i, row) in rows.enumerated() where !ids.insert(row.id).inserted { return i }
        return nil
    }

    static func page(_ ids: [String]) -> [Row] { ids.map { Row(id: $0, json: Data("{}".utf8)) } }

    @Test("small pages: none, the first repeat among several, a repeat of the first row, one-row and empty pages")
    func smallPages() {
        #expect(Store.firstRepeatedID(Self.page([])) == nil)
        #expect(Store.firstRepeatedID(Self.page(["a"])) == nil)
        #expect(Store.firstRepeatedID(Self.page(["a", "b", "c"])) == nil)
        #expect(Store.firstRepeatedID(Self.page(["a", "b", "a", "b"])) == 2)
        #expect(Store.firstRepeatedID(Self.page(["x", "a", "b", "b", "x"])) == 3)
        // IDs that differ only past their first 8 bytes, or only in length.
        #expect(Store.firstRepeatedID(Self.page(["abcdefgh1", "abcdefgh2", "abcdefgh", "abcdefgh12345678x", "abcdefgh12345678"])) == nil)
        #expect(Store.firstRepeatedID(Self.page(["abcdefgh12345678x", "abcdefgh1", "abcdefgh12345678x"])) == 2)
    }

    @Test("IDs are compared as Strings, as the Set compared them: canonically equivalent IDs are one ID, with or without ASCII")
    func canonicalEquivalence() {
        // "é" precomposed and "e" + U+0301; the Kelvin sign U+212A and "K".
        let cases: [(ids: [String], repeated: Int)] = [(["é", "e\u{301}", "é"], 1), (["x", "K", "\u{212A}"], 2), (["\u{212A}", "y", "K"], 2)]
        for (ids, repeated) in cases {
            let rows = Self.page(ids)
            #expect(Self.bySet(rows) == repeated)
            #expect(Store.firstRepeatedID(rows) == repeated)
        }
    }

    @Test("1,000-row pages with and without repeats, ASCII only or not, short and long IDs: the Set's answer; with every collision sent to the Set, the same", arguments: [0, 1, 2, 3, 4, 5, 6, 7])
    func generatedPages(seed: UInt64) {
        var random = DamagedFileTests.SplitMix(state: seed)
        for round in 0..<20 {
            var ids: [String] = []
            // Rounds 0, 1 (of every 4): ASCII IDs only (the hashed path); 2, 3: some not.
            let kinds: UInt64 = round % 4 < 2 ? 3 : 4
            for i in 0..<1_000 {
                switch random.next() % kinds {
                case 0: ids.append("\(i)")
                case 1: ids.append("https://pokeapi.co/api/v2/pokemon/\(i)/")
                case 2: ids.append(String(repeating: "z", count: Int(random.next() % 40)) + "\(i)")
                default: ids.append("名前-\(i)")
                }
            }
            // Half the pages get a repeat: of an earlier row at a random place.
            if round % 2 == 1 {
                let from = Int(random.next() % 999)
                let at = from + 1 + Int(random.next() % UInt64(999 - from))
                ids[at] = ids[from]
            }
            let rows = Self.page(ids)
            let expected = Self.bySet(rows)
            #expect(Store.firstRepeatedID(rows) == expected)
            // A probe limit of 0 sends every collision to the Set.
            #expect(Store.firstRepeatedID(rows, probeLimit: 0) == expected)
            if round % 2 == 1 { #expect(expected != nil) } else { #expect(expected == nil) }
        }
    }
}

/// `Store.isJSON`, which decides whether a 2xx body is parsed or refused as `malformedBody`:
/// the ASCII fast path and the Foundation path give the rule's answers.
@Suite("Fetching: which Content-Type values are JSON")
struct ContentTypeIsJSONTests {
    @Test("application/json, text/json and +json types, any case, with parameters and blanks around; nothing else", arguments: [
        ("application/json", true), ("Application/JSON; charset=utf-8", true), (" \ttext/json ;q=1", true),
        ("application/problem+json", true), ("APPLICATION/VND.API+JSON", true), (";;application/json; x", true),
        ("text/html", false), ("", false), (";", false), ("  ", false), ("application/json5", false),
        ("application/jsonx; charset=utf-8", false), ("+json", true), ("application/ json", false),
        // Not ASCII: Foundation's trimming (Unicode white space) and lowercasing, as before.
        ("application/json\u{A0}", true), ("application/jsön", false),
    ])
    func isJSON(contentType: String, expected: Bool) {
        #expect(Store.isJSON(contentType) == expected)
    }
}
