import Foundation
import FreshetCommands
import Testing

/// `--at` refuses a time whose fields name no real moment instead of letting Foundation roll it
/// over (trial finding 8: `2026-02-30` was read as March 2, `22:23:60` as 22:24:00).
@Suite("--at: impossible dates and times are usage errors")
struct ImpossibleTimeTests {
    static let refusal = "needs an ISO 8601 time such as 2026-01-01T00:00:05Z, got"

    @Test("replay --at and why --at refuse each with the usage error's wording and exit 2", arguments: [
        ("2026-02-30T22:23:18Z", "February 2026 has 28 days"),
        ("2026-02-29T00:00:00Z", "February 2026 has 28 days"),
        ("2026-04-31T00:00:00.500Z", "April 2026 has 30 days"),
        ("2026-12-00T00:00:00Z", "December 2026 has 31 days"),
        ("2026-12-01T22:23:60Z", "second 60 does not exist (0 to 59)"),
        ("2026-12-01T22:60:00Z", "minute 60 does not exist (0 to 59)"),
        ("2026-12-01T24:00:00Z", "hour 24 does not exist (0 to 23)"),
        ("2026-13-01T22:23:18Z", "month 13 does not exist (1 to 12)"),
        ("2026-00-01T22:23:18Z", "month 0 does not exist (1 to 12)"),
        ("2026-12-01T22:23:18+24:00", "zone offset +24:00 does not exist"),
        ("10000-01-01T00:00:00Z", "a year has four digits here (0001 to 9999)"),
        ("99999-01-01T00:00:00Z", "a year has four digits here (0001 to 9999)"),
        ("0000-01-01T00:00:00Z", "year 0000 does not exist (0001 to 9999)"),
    ])
    func refused(time: String, reason: String) {
        let message = "--at \(Self.refusal) \(time.debugDescription): \(reason)"
        for arguments in [["replay", "d", "--at", time], ["why", "d", "c", "--at", time]] {
            let error = #expect(throws: Command.UsageError.self) { try Command.parse(arguments) }
            #expect(error?.message == message)
        }
        let run = runTool(["replay", "/nonexistent-store", "--at", time])
        #expect(run.status == 2)
        #expect(run.stdout == [])
        #expect(run.stderr == ["freshet: \(message)"])
    }

    @Test("real moments at the edges still parse to the exact time", arguments: [
        ("2028-02-29T00:00:00Z", Int64(1_835_395_200_000)),
        ("2000-02-29T23:59:59Z", 951_868_799_000),
        ("2026-12-31T23:59:59.999Z", 1_798_761_599_999),
        ("2026-01-01T00:00:05+01:00", 1_767_222_005_000),
    ])
    func accepted(time: String, millis: Int64) throws {
        guard case .replay(let options) = try Command.parse(["replay", "d", "--at", time]), case .time(let parsed) = options.point else {
            Issue.record("\(time) did not parse as a replay time")
            return
        }
        #expect(Int64((parsed.timeIntervalSince1970 * 1000).rounded(.down)) == millis)
    }

    @Test("1900 is no leap year; 2000 and 2028 are")
    func leapYears() {
        #expect(Command.calendarProblem(in: "1900-02-29T00:00:00Z") == "February 1900 has 28 days")
        #expect(Command.calendarProblem(in: "2000-02-29T00:00:00Z") == nil)
        #expect(Command.calendarProblem(in: "2028-02-29T00:00:00Z") == nil)
        #expect(Command.calendarProblem(in: "yesterday") == nil)
    }
}
