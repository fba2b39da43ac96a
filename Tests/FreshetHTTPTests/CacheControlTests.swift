import Testing
@testable import FreshetHTTP

@Suite("CacheControl (RFC 9111 §5.2)")
struct CacheControlTests {
    @Test("parses well-formed directives", arguments: [
        ("max-age=60", CacheControl(maxAge: 60)),
        ("public, max-age=300, stale-while-revalidate=60", CacheControl(maxAge: 300, isPublic: true, staleWhileRevalidate: 60)),
        ("private, must-revalidate, no-store, immutable", CacheControl(noStore: true, mustRevalidate: true, isPrivate: true, immutable: true)),
        ("no-cache", CacheControl(noCache: true)),
        ("s-maxage=600, max-age=0", CacheControl(maxAge: 0, sMaxAge: 600)),
        ("max-age=60, stale-if-error=86400", CacheControl(maxAge: 60, staleIfError: 86400)),
        ("max-age=2147483647", CacheControl(maxAge: 2_147_483_647)),
    ])
    func wellFormed(value: String, expected: CacheControl) {
        #expect(CacheControl(parsing: value) == expected)
    }

    @Test("is tolerant of case, quotes, whitespace and empty elements", arguments: [
        ("MAX-AGE=60, No-Cache", CacheControl(maxAge: 60, noCache: true)),
        (#"max-age="60""#, CacheControl(maxAge: 60)),
        ("  max-age = 60 ,, public ,", CacheControl(maxAge: 60, isPublic: true)),
        ("\tmax-age=60\t,\tprivate", CacheControl(maxAge: 60, isPrivate: true)),
        (#"no-cache="Set-Cookie, X-Foo", max-age=5"#, CacheControl(maxAge: 5, noCache: true)),
        (#"private="Authorization""#, CacheControl(isPrivate: true)),
        (#""quoted-name"=1, public"#, CacheControl(isPublic: true)),
    ])
    func tolerant(value: String, expected: CacheControl) {
        #expect(CacheControl(parsing: value) == expected)
    }

    @Test("treats an invalid or conflicting freshness directive as stale (RFC 9111 §4.2.1)", arguments: [
        "max-age=-1", "max-age=abc", "max-age=1.5", "max-age", "max-age=", "max-age=60 junk",
        "max-age=+60", "max-age=60, max-age=120", "max-age=abc, max-age=60", "max-age=60, max-age=-1",
    ])
    func invalidMaxAge(value: String) {
        #expect(CacheControl(parsing: value) == CacheControl(maxAge: 0))
    }

    @Test("keeps a freshness directive repeated with the same value")
    func repeatedSameValue() {
        #expect(CacheControl(parsing: "max-age=60, MAX-AGE=60") == CacheControl(maxAge: 60))
    }

    @Test("applies the same rule to s-maxage")
    func invalidSMaxAge() {
        #expect(CacheControl(parsing: "s-maxage=x") == CacheControl(sMaxAge: 0))
        #expect(CacheControl(parsing: "s-maxage=10, s-maxage=20") == CacheControl(sMaxAge: 0))
    }

    @Test("caps delta-seconds beyond 2^31 at 2147483648 (RFC 9111 §1.2.2)", arguments: [
        "max-age=2147483648", "max-age=2147483649", "max-age=99999999999999999999999999999999",
    ])
    func capped(value: String) {
        #expect(CacheControl(parsing: value).maxAge == 2_147_483_648)
    }

    @Test("ignores invalid stale-while-revalidate and keeps the smallest of repeats")
    func staleDirectives() {
        #expect(CacheControl(parsing: "stale-while-revalidate=abc").staleWhileRevalidate == nil)
        #expect(CacheControl(parsing: "stale-while-revalidate").staleWhileRevalidate == nil)
        #expect(CacheControl(parsing: "stale-while-revalidate=30, stale-while-revalidate=10").staleWhileRevalidate == 10)
        #expect(CacheControl(parsing: "stale-if-error=30, stale-if-error=x").staleIfError == 30)
    }

    @Test("keeps other directives by lowercased name, first occurrence winning")
    func otherDirectives() {
        let parsed = CacheControl(parsing: #"no-transform, Community="UCI", x-ext, community=other, max-age=1"#)
        #expect(parsed == CacheControl(maxAge: 1, otherDirectives: ["no-transform": "", "community": "UCI", "x-ext": ""]))
    }

    @Test("gives no directives for empty or useless input", arguments: ["", " ", ",,,", "=", "=5", #""""#])
    func empty(value: String) {
        #expect(CacheControl(parsing: value) == CacheControl())
    }

    @Test("reads all Cache-Control lines of a header list as one list")
    func fromHeaders() {
        let headers: HTTPHeaders = ["Cache-Control": "max-age=60", "ETag": #""x""#, "cache-control": "public"]
        #expect(CacheControl(headers: headers) == CacheControl(maxAge: 60, isPublic: true))
        #expect(CacheControl(headers: [:]) == CacheControl())
    }
}
