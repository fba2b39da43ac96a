import Foundation
import Testing
@testable import FreshetHTTP

@Suite("HTTPDate (RFC 9110 §5.6.7)")
struct HTTPDateTests {
    /// 2026-01-01 00:00:00 GMT, the "now" for two-digit years.
    static let now = Date(timeIntervalSince1970: 1_767_225_600)

    @Test("reads the three forms of the RFC's example as the same instant", arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
        "  Sun, 06 Nov 1994 08:49:37 GMT\t",
    ])
    func rfcExample(text: String) {
        #expect(HTTPDate.parse(text, now: Self.now) == Date(timeIntervalSince1970: 784_111_777))
    }

    @Test("reads valid dates to the exact second", arguments: [
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
        ("Wed, 31 Dec 1969 23:59:59 GMT", -1),
        ("Fri, 31 Dec 1999 23:59:59 GMT", 946_684_799),
        ("Tue, 29 Feb 2000 00:00:00 GMT", 951_782_400),
        ("Mon, 01 Jan 1900 00:00:00 GMT", -2_208_988_800),
        ("Fri, 31 Dec 9999 23:59:59 GMT", 253_402_300_799),
        ("Mon, 01 Jan 0001 00:00:00 GMT", -62_135_596_800),
        ("Sun Nov 16 08:49:37 1994", 784_975_777),
        ("Sat, 31 Dec 2016 23:59:60 GMT", 1_483_228_800),
    ])
    func validDates(text: String, seconds: Int) {
        #expect(HTTPDate.parse(text, now: Self.now) == Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    @Test("takes a two-digit year as at most 50 years after now's year")
    func twoDigitYears() {
        // now is 2026: 76 -> 2076 (exactly 50 years ahead), 77 -> 1977, 25 -> 2025.
        #expect(HTTPDate.parse("Thursday, 01-Jan-76 00:00:00 GMT", now: Self.now) == Date(timeIntervalSince1970: 3_345_062_400))
        #expect(HTTPDate.parse("Saturday, 01-Jan-77 00:00:00 GMT", now: Self.now) == Date(timeIntervalSince1970: 220_924_800))
        #expect(HTTPDate.parse("Monday, 06-Nov-94 08:49:37 GMT", now: Date(timeIntervalSince1970: 0)) == Date(timeIntervalSince1970: 784_111_777))
    }

    @Test("returns nil for anything that is not an HTTP-date", arguments: [
        "", "   ", "garbage", "0", "1994-11-06T08:49:37Z",
        "Sun, 06 Nov 1994 08:49:37 UTC",   // only GMT
        "Sun, 06 Nov 1994 08:49:37 gmt",   // case-sensitive
        "sun, 06 Nov 1994 08:49:37 GMT",
        "Sun, 06 nov 1994 08:49:37 GMT",
        "Sun, 6 Nov 1994 08:49:37 GMT",    // day needs two digits
        "Sun, 06 Nov 94 08:49:37 GMT",     // IMF-fixdate needs four
        "Sun,06 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37",
        "Sun, 06 Nov 1994 08:49:37 GMT x",
        "Sun, 06 Nov 1994 8:49:37 GMT",
        "Sun, 00 Nov 1994 08:49:37 GMT",   // day 0
        "Sun, 31 Apr 1994 08:49:37 GMT",   // 30 days in April
        "Thu, 29 Feb 1900 00:00:00 GMT",   // 1900 is not a leap year
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 08:49:61 GMT",
        "Fun, 06 Nov 1994 08:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sun, 06-Nov-94 08:49:37 GMT",     // RFC 850 needs the long day name
        "Sun Nov 6 08:49:37 1994",         // asctime pads with a space
        "Sun Nov  6 08:49:37 94",
        "Sun, 06 Nov 1994 08:49:37 GMT\u{0}",
    ])
    func garbage(text: String) {
        #expect(HTTPDate.parse(text, now: Self.now) == nil)
    }

    @Test("formats as IMF-fixdate", arguments: [
        (784_111_777.0, "Sun, 06 Nov 1994 08:49:37 GMT"),
        (784_111_777.999, "Sun, 06 Nov 1994 08:49:37 GMT"),
        (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
        (-0.5, "Wed, 31 Dec 1969 23:59:59 GMT"),
        (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
        (1_767_225_600, "Thu, 01 Jan 2026 00:00:00 GMT"),
        (-62_135_596_800, "Mon, 01 Jan 0001 00:00:00 GMT"),
        (253_402_300_799, "Fri, 31 Dec 9999 23:59:59 GMT"),
    ])
    func format(seconds: Double, expected: String) {
        #expect(HTTPDate.format(Date(timeIntervalSince1970: seconds)) == expected)
    }

    @Test("reads back what it writes", arguments: [0, 1, 784_111_777, 951_868_799, 4_102_444_800, -86_401, 1_700_000_000])
    func roundTrip(seconds: Int) {
        let date = Date(timeIntervalSince1970: TimeInterval(seconds))
        #expect(HTTPDate.parse(HTTPDate.format(date), now: Self.now) == date)
    }
}
