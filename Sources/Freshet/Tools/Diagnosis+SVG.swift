import Foundation

extension Diagnosis {
    /// The timeline as a plain SVG 1.1 picture (`freshet why --svg FILE`): a time axis; one
    /// mark per record (fetched green, 304 blue, failure red, invalidation purple, local write
    /// and mutations grey), each with its summary as a `<title>` tooltip; the span the rows were
    /// fresh as a green band and the span they were stale as an orange one (from the last
    /// validation, as the verdict judges it); a dashed line at the moment asked about; the
    /// verdict as the caption. Every mark has a `class` (`mark fetched`, `band fresh`, `now`).
    public func svg() -> String {
        let width = 900.0, left = 40.0, right = 860.0, axisY = 130.0, markY = 95.0
        let times = timeline.map(\.timestamp) + [time] + [syncMark?.validatedAt, freshness.freshUntil].compactMap { $0 }
        let start = times.min() ?? time
        let end = max(times.max() ?? time, start.addingTimeInterval(1))
        func x(_ t: Date) -> Double { left + (right - left) * t.timeIntervalSince(start) / end.timeIntervalSince(start) }
        func f(_ v: Double) -> String { String(format: "%.1f", v) }
        func esc(_ s: String) -> String {
            var out = ""
            for c in s.unicodeScalars {
                switch c {
                case "&": out += "&amp;"
                case "<": out += "&lt;"
                case ">": out += "&gt;"
                case "\"": out += "&quot;"
                case _ where c.value < 0x20 && c != "\t": out += " "
                default: out.unicodeScalars.append(c)
                }
            }
            return out
        }
        var svg = ##"<?xml version="1.0" encoding="UTF-8"?>"## + "\n"
        svg += ##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(Int(width))" height="190" viewBox="0 0 \##(Int(width)) 190" font-family="sans-serif" font-size="11">"## + "\n"
        svg += "<title>\(esc(collection)): \(esc(summary))</title>\n"
        svg += ##"<text class="caption" x="\##(f(left))" y="20" font-size="13">"## + esc("\(collection): \(verdict.rawValue)") + "</text>\n"
        svg += ##"<text class="policy" x="\##(f(left))" y="38">"## + esc("judged at \(LogRecord.iso8601(time)), status \(status)") + "</text>\n"
        if let validated = syncMark?.validatedAt {
            let until = freshness.freshUntil.map { min($0, time) } ?? (freshness.isStale ? validated : time)
            if until > validated {
                svg += ##"<rect class="band fresh" x="\##(f(x(validated)))" y="60" width="\##(f(x(until) - x(validated)))" height="60" fill="#c8ecc8"><title>fresh</title></rect>"## + "\n"
            }
            if freshness.isStale, time > until {
                svg += ##"<rect class="band stale" x="\##(f(x(until)))" y="60" width="\##(f(x(time) - x(until)))" height="60" fill="#f9d9a8"><title>stale</title></rect>"## + "\n"
            }
        }
        svg += ##"<line class="axis" x1="\##(f(left))" y1="\##(f(axisY))" x2="\##(f(right))" y2="\##(f(axisY))" stroke="#333"/>"## + "\n"
        svg += ##"<text class="start" x="\##(f(left))" y="150">"## + esc(LogRecord.iso8601(start)) + "</text>\n"
        svg += ##"<text class="end" x="\##(f(right))" y="150" text-anchor="end">"## + esc(LogRecord.iso8601(end)) + "</text>\n"
        for record in timeline {
            let color = switch record.kind {
            case .fetched: "#2e8b2e"
            case .notModified: "#2f6fd0"
            case .fetchFailed: "#d03030"
            case .invalidated: "#8a3fb8"
            case .evicted: "#b8860b"
            default: "#777777"
            }
            svg += ##"<circle class="mark \##(record.kind.name)" cx="\##(f(x(record.timestamp)))" cy="\##(f(markY))" r="5" fill="\##(color)">"##
            svg += "<title>" + esc("LSN \(record.lsn) \(LogRecord.iso8601(record.timestamp)) \(record.kind.name): \(record.summary)") + "</title></circle>\n"
        }
        svg += ##"<line class="now" x1="\##(f(x(time)))" y1="50" x2="\##(f(x(time)))" y2="\##(f(axisY + 5))" stroke="#000" stroke-dasharray="4 3"><title>"## + esc("asked about: \(LogRecord.iso8601(time))") + "</title></line>\n"
        svg += "</svg>\n"
        return svg
    }
}
