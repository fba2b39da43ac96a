import Foundation
import Testing
@testable import Freshet

/// The log tools decode each collection's name once (`CollectionNames`): every name it gives
/// must be the one `String.validatingUTF8` makes of the same bytes, whatever the order of the
/// records, and it must refuse what that refuses.
@Suite("Collection names made once per collection")
struct CollectionNamesTests {
    static func name(_ names: inout CollectionNames, _ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { names.name($0) }
    }

    @Test("names in runs, in turns, at random, empty, multi-byte and long are the names of their bytes")
    func sameNames() {
        let pool = ["a", "b", "w5-0", "w5-1", "w5-10", "", "pokémon", "ピカチュウ", String(repeating: "long name ", count: 5), "a\u{0}b"]
        var g = DamagedFileTests.SplitMix(state: 3)
        var order: [String] = []
        for _ in 0..<5 { order += ["a", "a", "a"] }                       // a run
        for _ in 0..<5 { order += pool }                                  // in turns
        for _ in 0..<500 { order.append(pool[Int.random(in: 0..<pool.count, using: &g)]) } // at random
        var names = CollectionNames()
        for expected in order {
            let got = Self.name(&names, Array(expected.utf8))
            #expect(got == expected)
            #expect(got.map { Array($0.utf8) } == Array(expected.utf8))
        }
    }

    @Test("bytes that are not UTF-8 give nil, before and after a valid name of the same length")
    func refused() {
        var names = CollectionNames()
        #expect(Self.name(&names, [0x61, 0xFF]) == nil)
        #expect(Self.name(&names, [0x61, 0x62]) == "ab")
        #expect(Self.name(&names, [0x61, 0xFF]) == nil)
        #expect(Self.name(&names, [0x61, 0x62]) == "ab")
        #expect(Self.name(&names, [0xC3]) == nil)
    }

    @Test("past the limit of names kept, every name is still its bytes' name")
    func pastTheLimit() {
        var names = CollectionNames()
        let count = CollectionNames.limit + 50
        for round in 0..<2 {
            for i in 0..<count {
                let expected = "c\(i)"
                #expect(Self.name(&names, Array(expected.utf8)) == expected, "round \(round), \(i)")
            }
        }
    }
}
