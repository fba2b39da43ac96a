import Foundation

/// Reading and writing `HTTP-date` timestamps (RFC 9110 §5.6.7), as used by `Date`,
/// `Last-Modified`, `Expires`, `If-Modified-Since` and `Retry-After`.
///
/// ```swift
/// HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT")    // 1994-11-06 08:49:37 +0000
/// HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT")   // the same instant (RFC 850 form)
/// HTTPDate.parse("Sun Nov  6 08:49:37 1994")         // the same instant (asctime form)
/// HTTPDate.format(date)                              // "Sun, 06 Nov 1994 08:49:37 GMT"
/// ```
///
/// Parsed by hand on UTF-8 bytes with a proleptic Gregorian calendar in GMT: no
/// `DateFormatter`, no locale, no time zone database, no shared state, so both functions are
/// safe to call from any thread and give the same result everywhere.
public enum HTTPDate {
    /// Parses an HTTP-date in any of the three forms a recipient must accept (RFC 9110 §5.6.7):
    /// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form
    /// (`Sunday, 06-Nov-94 08:49:37 GMT`) and the obsolete asctime form
    /// (`Sun Nov  6 08:49:37 1994`).
    ///
    /// The grammar is followed exactly, and it is case-sensitive ("HTTP-date is case
    /// sensitive", RFC 9110 §5.6.7): `gmt`, `nov`, a missing zero (`6 Nov`) or a time zone
    /// other than `GMT` are rejected. Leading and trailing spaces and tabs are ignored. The day
    /// name must be a valid name but is not checked against the date. Fields are range-checked
    /// (day within its month, hour 0–23, minute 0–59, second 0–60; a leap second 60 rolls into
    /// the next minute).
    ///
    /// - Parameters:
    ///   - text: the field value.
    ///   - now: only read for the RFC 850 form's two-digit year, which is taken as the latest
    ///     year ending in those digits that is not more than 50 years after `now`'s year (RFC
    ///     9110 §5.6.7). Pass the injected clock's time where results must be reproducible.
    /// - Returns: the instant, or `nil` when `text` is not an HTTP-date.
    public static func parse(_ text: String, now: Date = Date()) -> Date? {
        var cursor = Cursor(text)
        cursor.skipWhitespace()
        let start = cursor.position
        if let date = parseIMFFixdate(&cursor) { return date }
        cursor.position = start
        if let date = parseRFC850Date(&cursor, now: now) { return date }
        cursor.position = start
        return parseAsctimeDate(&cursor)
    }

    /// Formats `date` as an IMF-fixdate (RFC 9110 §5.6.7), e.g.
    /// `"Sun, 06 Nov 1994 08:49:37 GMT"`, the only form a sender may generate. Fractions of a
    /// second are dropped (rounded towards the past). Years outside 0001–9999 cannot be
    /// written as four digits and give a string that is not a valid HTTP-date.
    ///
    /// Precondition: `date` is finite (not built from an infinite or NaN interval).
    public static func format(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970.rounded(.down)
        precondition(interval.isFinite && abs(interval) < 1e15, "HTTPDate.format needs a finite date, got \(date.timeIntervalSince1970)")
        let seconds = Int(interval)
        let (days, secondOfDay) = floorDivision(seconds, 86_400)
        let (year, month, day) = civil(fromDays: days)
        let weekday = floorDivision(days + 4, 7).remainder // 1970-01-01 was a Thursday.
        return "\(shortDayNames[weekday]), \(twoDigits(day)) \(monthNames[month - 1]) \(fourDigits(year)) "
            + "\(twoDigits(secondOfDay / 3600)):\(twoDigits(secondOfDay / 60 % 60)):\(twoDigits(secondOfDay % 60)) GMT"
    }

    // MARK: - The three forms

    /// `IMF-fixdate = day-name "," SP date1 SP time-of-day SP GMT`,
    /// `date1 = day SP month SP year` (2DIGIT, 4DIGIT).
    private static func parseIMFFixdate(_ cursor: inout Cursor) -> Date? {
        guard cursor.name(from: shortDayNames) != nil, cursor.literal(", "),
              let day = cursor.digits(2), cursor.literal(" "),
              let month = cursor.name(from: monthNames), cursor.literal(" "),
              let year = cursor.digits(4), cursor.literal(" "),
              let time = parseTimeOfDay(&cursor), cursor.literal(" GMT"), cursor.isAtEndIgnoringWhitespace
        else { return nil }
        return date(year: year, month: month + 1, day: day, time: time)
    }

    /// `rfc850-date = day-name-l "," SP date2 SP time-of-day SP GMT`,
    /// `date2 = day "-" month "-" 2DIGIT`.
    private static func parseRFC850Date(_ cursor: inout Cursor, now: Date) -> Date? {
        guard cursor.name(from: longDayNames) != nil, cursor.literal(", "),
              let day = cursor.digits(2), cursor.literal("-"),
              let month = cursor.name(from: monthNames), cursor.literal("-"),
              let twoDigitYear = cursor.digits(2), cursor.literal(" "),
              let time = parseTimeOfDay(&cursor), cursor.literal(" GMT"), cursor.isAtEndIgnoringWhitespace
        else { return nil }
        return date(year: fullYear(twoDigitYear, now: now), month: month + 1, day: day, time: time)
    }

    /// `asctime-date = day-name SP date3 SP time-of-day SP year`,
    /// `date3 = month SP ( 2DIGIT / ( SP DIGIT ) )`.
    private static func parseAsctimeDate(_ cursor: inout Cursor) -> Date? {
        guard cursor.name(from: shortDayNames) != nil, cursor.literal(" "),
              let month = cursor.name(from: monthNames), cursor.literal(" ")
        else { return nil }
        let day: Int
        if cursor.literal(" ") {
            guard let digit = cursor.digits(1) else { return nil }
            day = digit
        } else {
            guard let digits = cursor.digits(2) else { return nil }
            day = digits
        }
        guard cursor.literal(" "), let time = parseTimeOfDay(&cursor), cursor.literal(" "),
              let year = cursor.digits(4), cursor.isAtEndIgnoringWhitespace
        else { return nil }
        return date(year: year, month: month + 1, day: day, time: time)
    }

    /// `time-of-day = hour ":" minute ":" second`, each 2DIGIT; the second of the day.
    private static func parseTimeOfDay(_ cursor: inout Cursor) -> Int? {
        guard let hour = cursor.digits(2), cursor.literal(":"),
              let minute = cursor.digits(2), cursor.literal(":"),
              let second = cursor.digits(2),
              hour <= 23, minute <= 59, second <= 60
        else { return nil }
        return hour * 3600 + minute * 60 + second
    }

    /// The instant for a validated civil date and second of day, or `nil` when `day` is not in
    /// `month` (day 0, 31 April, 29 February of a common year).
    private static func date(year: Int, month: Int, day: Int, time: Int) -> Date? {
        guard day >= 1, day <= daysInMonth(year: year, month: month) else { return nil }
        let seconds = days(fromYear: year, month: month, day: day) * 86_400 + time
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// The four-digit year for an RFC 850 two-digit year (RFC 9110 §5.6.7).
    private static func fullYear(_ twoDigitYear: Int, now: Date) -> Int {
        let nowSeconds = now.timeIntervalSince1970
        let currentYear = nowSeconds.isFinite && abs(nowSeconds) < 1e15
            ? civil(fromDays: floorDivision(Int(nowSeconds.rounded(.down)), 86_400).quotient).year
            : 1970
        let candidate = currentYear - floorDivision(currentYear, 100).remainder + twoDigitYear
        return candidate > currentYear + 50 ? candidate - 100 : candidate
    }

    // MARK: - Calendar arithmetic (proleptic Gregorian, after H. Hinnant's civil algorithms)

    private static let shortDayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let longDayNames = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static func isLeapYear(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    private static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 for a civil date (month 1–12).
    private static func days(fromYear year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = floorDivision(shiftedYear, 400).quotient
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date (month 1–12) of a day counted from 1970-01-01.
    package static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = floorDivision(shifted, 146_097).quotient
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Division rounding towards negative infinity, with a non-negative remainder.
    private static func floorDivision(_ dividend: Int, _ divisor: Int) -> (quotient: Int, remainder: Int) {
        let remainder = ((dividend % divisor) + divisor) % divisor
        return ((dividend - remainder) / divisor, remainder)
    }

    private static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }

    private static func fourDigits(_ value: Int) -> String {
        let digits = "\(abs(value))"
        let padded = String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        return value < 0 ? "-" + padded : padded
    }

    // MARK: - Cursor

    /// A read position in the UTF-8 bytes of the text being parsed.
    private struct Cursor {
        let bytes: [UInt8]
        var position = 0

        init(_ text: String) {
            bytes = Array(text.utf8)
        }

        mutating func skipWhitespace() {
            while position < bytes.count, FieldSyntax.isWhitespace(bytes[position]) { position += 1 }
        }

        var isAtEndIgnoringWhitespace: Bool {
            bytes[position...].allSatisfy(FieldSyntax.isWhitespace)
        }

        /// Consumes `expected` exactly (case-sensitive) and returns `true`, or consumes
        /// nothing and returns `false`.
        mutating func literal(_ expected: String) -> Bool {
            let expectedBytes = Array(expected.utf8)
            guard bytes.count - position >= expectedBytes.count,
                  bytes[position..<position + expectedBytes.count].elementsEqual(expectedBytes)
            else { return false }
            position += expectedBytes.count
            return true
        }

        /// Consumes exactly `count` ASCII digits and returns their value.
        mutating func digits(_ count: Int) -> Int? {
            guard bytes.count - position >= count else { return nil }
            var value = 0
            for byte in bytes[position..<position + count] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            position += count
            return value
        }

        /// Consumes one of `names` (case-sensitive) and returns its index.
        mutating func name(from names: [String]) -> Int? {
            for (index, name) in names.enumerated() where literal(name) {
                return index
            }
            return nil
        }
    }
}
