import Foundation
import Testing
@testable import Freshet

@Suite("Writing JSON")
struct JSONWriterTests {
    static let strings = ["", "plain", "quote \" backslash \\ slash /", "\u{00}\u{01}\u{08}\u{09}\u{0A}\u{0B}\u{0C}\u{0D}\u{1F}", "é€𝄞", "\u{7F}\u{2028}"]

    @Test("strings are escaped exactly as JSONSerialization escapes them with .withoutEscapingSlashes", arguments: strings)
    func stringsLikeFoundation(s: String) throws {
        var w = JSONWriter()
        w.string(s)
        let foundation = try JSONSerialization.data(withJSONObject: [s], options: [.withoutEscapingSlashes])
        #expect("[" + w.string + "]" == String(decoding: foundation, as: UTF8.self))
        let back = try #require(JSONSerialization.jsonObject(with: Data(w.bytes), options: [.fragmentsAllowed]) as? String)
        #expect(back == s)
    }

    @Test("integers, doubles, booleans, null, raw bytes, objects and arrays")
    func values() {
        var w = JSONWriter()
        w.object { o in
            o.field("i", number: Int64.min)
            o.field("u", number: UInt64.max)
            o.field("z", number: 0)
            o.field("d") { $0.number(1.5) }
            o.field("w") { $0.number(3.0) }
            o.field("inf") { $0.number(Double.infinity) }
            o.field("b", bool: false)
            o.field("n") { $0.null() }
            o.field("raw") { $0.raw(Array(#"{"x":[1]}"#.utf8)) }
            o.field("s", string: nil)
            o.field("a") { $0.array(strings: ["x", "y"]) }
            o.field("e") { $0.array { _ in } }
        }
        #expect(w.string == #"{"i":-9223372036854775808,"u":18446744073709551615,"z":0,"d":1.5,"w":3,"inf":null,"b":false,"n":null,"raw":{"x":[1]},"a":["x","y"],"e":[]}"#)
    }
}
