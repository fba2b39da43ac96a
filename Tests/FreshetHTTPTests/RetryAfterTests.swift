import Foundation
import Testing
@testable import FreshetHTTP

@Suite("RetryAfter (RFC 9110 §10.2.3)")
struct RetryAfterTests {
    @Test("reads delay-seconds", arguments: [
        ("120", 120), (" 120 ", 120), ("0", 0), ("007", 7),
        ("99999999999999999999", 2_147_483_648),
    ])
    func seconds(value: String, expected: Int) {
        #expect(RetryAfter(parsing: value) == .seconds(expected))
    }

    @Test("reads an HTTP-date in any of its forms", arguments: [
        "Fri, 31 Dec 1999 23:59:59 GMT",
        "Friday, 31-Dec-99 23:59:59 GMT",
        "Fri Dec 31 23:59:59 1999",
    ])
    func date(value: String) {
        let now = Date(timeIntervalSince1970: 1_767_225_600)
        #expect(RetryAfter(parsing: value, now: now) == .date(Date(timeIntervalSince1970: 946_684_799)))
    }

    @Test("returns nil for anything else", arguments: [
        "", " ", "-5", "+5", "1.5", "120 seconds", "soon", "1e3", "Fri, 31 Dec 1999", "１２０",
    ])
    func garbage(value: String) {
        #expect(RetryAfter(parsing: value) == nil)
    }

    @Test("turns into a delay counted from when the response was received")
    func delay() {
        let received = Date(timeIntervalSince1970: 1_000_000)
        #expect(RetryAfter.seconds(120).delay(from: received) == .seconds(120))
        #expect(RetryAfter.date(received.addingTimeInterval(90)).delay(from: received) == .seconds(90))
        #expect(RetryAfter.date(received.addingTimeInterval(-90)).delay(from: received) == .zero)
    }

    @Test("reads the Retry-After line of a header list")
    func fromHeaders() {
        #expect(RetryAfter(headers: ["retry-after": "30"]) == .seconds(30))
        #expect(RetryAfter(headers: ["Retry-After": "later"]) == nil)
        #expect(RetryAfter(headers: [:]) == nil)
    }
}
