import Testing
@testable import FreshetHTTP

@Suite("EntityTag (RFC 9110 §8.8.3)")
struct EntityTagTests {
    @Test("parses strong and weak tags", arguments: [
        (#""xyzzy""#, "xyzzy", false),
        (#"W/"xyzzy""#, "xyzzy", true),
        (#""""#, "", false),
        (#"W/"""#, "", true),
        (#"  "a-b_c.1!#"  "#, "a-b_c.1!#", false),
        (#""W/x""#, "W/x", false),
    ])
    func parses(value: String, opaqueTag: String, isWeak: Bool) throws {
        let tag = try #require(EntityTag(parsing: value))
        #expect(tag.opaqueTag == opaqueTag)
        #expect(tag.isWeak == isWeak)
        #expect(tag == EntityTag(opaqueTag: opaqueTag, isWeak: isWeak))
    }

    @Test("returns nil for values that are not an entity-tag", arguments: [
        "", "xyzzy", #"w/"x""#, #""x"#, #"x""#, #"""#, #""a"b"#, #""a b""#, #""a"b""#,
        "W/", "W/x", #"W/ "x""#, "*", "\"a\tb\"", "\"a\u{7F}b\"",
    ])
    func garbage(value: String) {
        #expect(EntityTag(parsing: value) == nil)
    }

    @Test("describes itself in field form")
    func description() {
        #expect(EntityTag(opaqueTag: "v7").description == #""v7""#)
        #expect(EntityTag(opaqueTag: "v7", isWeak: true).description == #"W/"v7""#)
        #expect(EntityTag(parsing: #"W/"v7""#)?.description == #"W/"v7""#)
    }

    /// The table in RFC 9110 §8.8.3.2.
    @Test("compares as the RFC's table says", arguments: [
        (#"W/"1""#, #"W/"1""#, false, true),
        (#"W/"1""#, #"W/"2""#, false, false),
        (#"W/"1""#, #""1""#, false, true),
        (#""1""#, #""1""#, true, true),
        (#""1""#, #""2""#, false, false),
    ])
    func comparison(lhs: String, rhs: String, strong: Bool, weak: Bool) throws {
        let left = try #require(EntityTag(parsing: lhs))
        let right = try #require(EntityTag(parsing: rhs))
        #expect(left.strongCompare(right) == strong)
        #expect(right.strongCompare(left) == strong)
        #expect(left.weakCompare(right) == weak)
        #expect(right.weakCompare(left) == weak)
    }
}
