import Foundation
import Testing
@testable import Freshet

/// Events whose fields the log format cannot encode (negative numbers in unsigned fields)
/// must be refused with `invalidEvent` like other bad input (DESIGN "Bad input"); appending
/// one must never crash the process. Each test runs in a child process (an exit test), so a
/// crash fails only that test.
@Suite("Events the log cannot encode")
struct BadEventTests {
    /// Appends `event` in a fresh store; exits 0 only when it is refused with `invalidEvent`.
    static func expectRefused(_ event: Event) async {
        do {
            try await withTemporaryStore { store in
                do {
                    try await store.append(event, to: "items")
                    exit(3) // accepted
                } catch {
                    if (error as? StoreError)?.code != .invalidEvent { exit(4) }
                    if store.lastLSN != .zero { exit(5) }
                }
            }
        } catch {
            exit(6)
        }
    }

    @Test("a fetched page with a negative index is refused with invalidEvent")
    func negativePageIndex() async {
        await #expect(processExitsWith: .success) {
            await BadEventTests.expectRefused(.fetched(.init(placement: .page(index: -1, isLast: true), rows: [], response: ResponseInfo(url: "http://h/items", status: 200))))
        }
    }

    @Test("a fetchFailed with a negative attempt number is refused with invalidEvent, not a crash")
    func negativeAttempt() async {
        await #expect(processExitsWith: .success) {
            await BadEventTests.expectRefused(.fetchFailed(.init(url: "http://h/items", reason: "timedOut", message: "m", attempt: -1)))
        }
    }

    @Test("a fetched response with a negative status is refused with invalidEvent, not a crash")
    func negativeStatus() async {
        await #expect(processExitsWith: .success) {
            await BadEventTests.expectRefused(.fetched(.init(placement: .replace, rows: [], response: ResponseInfo(url: "http://h/items", status: -1))))
        }
    }

    @Test("a notModified with a negative page is refused with invalidEvent, not a crash")
    func negativeNotModifiedPage() async {
        await #expect(processExitsWith: .success) {
            await BadEventTests.expectRefused(.notModified(.init(response: ResponseInfo(url: "http://h/items", status: 304), page: -1)))
        }
    }
}
