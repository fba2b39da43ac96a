extension Command {
    /// Why the date and time fields of an ISO 8601 time (`YYYY-MM-DDTHH:MM:SS`, a fraction, then
    /// `Z` or `±HH:MM`) name no real moment — `February 2026 has 28 days`, `hour 24 does not
    /// exist (0 to 23)` — or nil when they do, or when `text` does not have that shape (the
    /// parser refuses it then).
    ///
    /// Foundation's ISO 8601 parser rolls such fields over (`2026-02-30` is read as March 2,
    /// `22:23:60` as 22:24:00; trial finding 8), so `--at` checks them first against the
    /// Gregorian calendar (ISO 8601 §4.1.2: days per month, leap years; seconds 0 to 59, a leap
    /// second is refused as well).
    package static func calendarProblem(in text: String) -> String? {
        let b = Array(text.utf8)
        func number(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= b.count else { return nil }
            var v = 0
            for c in b[start ..< start + count] {
                guard c >= 48, c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            return v
        }
        func at(_ i: Int, _ c: Character) -> Bool { i < b.count && b[i] == c.asciiValue }
        // Years as the tools print and import accepts them: four digits, 0001 to 9999.
        let yearDigits = b.prefix { $0 >= 48 && $0 <= 57 }.count
        if yearDigits > 4, at(yearDigits, "-") { return "a year has four digits here (0001 to 9999)" }
        if yearDigits == 4, number(0, 4) == 0, at(4, "-") { return "year 0000 does not exist (0001 to 9999)" }
        guard let year = number(0, 4), at(4, "-"), let month = number(5, 2), at(7, "-"), let day = number(8, 2), at(10, "T"),
              let hour = number(11, 2), at(13, ":"), let minute = number(14, 2), at(16, ":"), let second = number(17, 2)
        else { return nil }
        guard (1...12).contains(month) else { return "month \(month) does not exist (1 to 12)" }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        let names = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
        guard (1...days).contains(day) else { return "\(names[month - 1]) \(year) has \(days) days" }
        guard hour <= 23 else { return "hour \(hour) does not exist (0 to 23)" }
        guard minute <= 59 else { return "minute \(minute) does not exist (0 to 59)" }
        guard second <= 59 else { return "second \(second) does not exist (0 to 59)" }
        // The zone offset after the seconds and their fraction.
        var i = 19
        if at(i, ".") { i += 1; while number(i, 1) != nil { i += 1 } }
        if at(i, "+") || at(i, "-"), let h = number(i + 1, 2), at(i + 3, ":"), let m = number(i + 4, 2) {
            guard h <= 23, m <= 59 else { return "zone offset \(String(decoding: b[i ..< i + 6], as: UTF8.self)) does not exist" }
        }
        return nil
    }
}
