import Foundation

/// Medians over rounds, as a table and as `--json`.
struct Report {
    let cases: [Case]
    let results: [String: [Engine: [Child.Result]]]
    let sizes: Sizes

    func median(_ c: Case, _ engine: Engine, _ key: String) -> Double? {
        let values = (results[c.id]?[engine] ?? []).compactMap { $0.values[key] }
        return values.isEmpty ? nil : Measure.median(values)
    }

    static func format(_ v: Double?, _ unit: String) -> String {
        guard let v, v.isFinite else { return "n/a" }
        let number: String
        switch abs(v) {
        case 100_000...: number = String(format: "%.0fk", v / 1000)
        case 10_000...: number = String(format: "%.1fk", v / 1000)
        case 100...: number = String(format: "%.0f", v)
        case 10...: number = String(format: "%.1f", v)
        case 1...: number = String(format: "%.2f", v)
        default: number = String(format: "%.3f", v)
        }
        return "\(number) \(unit)"
    }

    /// How many times better Freshet is than `other` (> 1: Freshet better).
    static func ratio(_ freshet: Double?, _ other: Double?, higherIsBetter: Bool) -> String {
        guard let f = freshet, let o = other, f > 0, o > 0, f.isFinite, o.isFinite else { return "" }
        return String(format: "%.2f×", higherIsBetter ? f / o : o / f)
    }

    private static func pad(_ s: String, _ n: Int) -> String {
        s.count >= n ? s : s + String(repeating: " ", count: n - s.count)
    }

    private static func row(_ cells: [String], _ widths: [Int]) -> String {
        "| " + zip(cells, widths).map { pad($0, $1) }.joined(separator: " | ") + " |"
    }

    /// Medians of every output; the last columns say how many times better Freshet is.
    func table() -> String {
        let header = ["workload", "freshet", "lmdb (floor)", "sqlite", "freshet vs sqlite", "freshet vs lmdb"]
        var lines: [[String]] = []
        for c in cases {
            for o in c.outputs {
                let f = median(c, .freshet, o.key)
                let l = median(c, .lmdb, o.key)
                let s = median(c, .sqlite, o.key)
                let engines = o.only ?? Set(c.engines)
                // A ratio of ratios means nothing (W7): compare the ratios in the table only.
                let compare = o.unit != "×"
                lines.append([
                    o.label,
                    engines.contains(.freshet) ? Self.format(f, o.unit) : "—",
                    engines.contains(.lmdb) ? Self.format(l, o.unit) : "—",
                    engines.contains(.sqlite) ? Self.format(s, o.unit) : "—",
                    compare ? Self.ratio(f, s, higherIsBetter: o.higherIsBetter) : "",
                    compare ? Self.ratio(f, l, higherIsBetter: o.higherIsBetter) : "",
                ])
            }
        }
        let widths = header.indices.map { i in max(header[i].count, lines.map { $0[i].count }.max() ?? 0) }
        var out = [Self.row(header, widths), "|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|"]
        out += lines.map { Self.row($0, widths) }
        return out.joined(separator: "\n")
    }

    /// Peak memory (ru_maxrss of the workload's process; in brackets, what the timed part
    /// added to it) and the store's file size, medians over rounds.
    func resources() -> String {
        let header = ["workload", "engine", "peak memory (added)", "store file"]
        var lines: [[String]] = []
        for c in cases {
            for engine in c.engines {
                let rs = results[c.id]?[engine] ?? []
                guard !rs.isEmpty else { continue }
                let peak = Measure.median(rs.map { Double($0.peakBytes) }) / 1_048_576
                let added = Measure.median(rs.map { Double(max(0, $0.peakBytes - $0.peakBeforeBytes)) }) / 1_048_576
                let file = Measure.median(rs.map { Double($0.fileBytes) }) / 1_048_576
                lines.append([c.id, engine.rawValue, String(format: "%.1f MiB (+%.1f)", peak, added), String(format: "%.2f MiB", file)])
            }
        }
        let widths = header.indices.map { i in max(header[i].count, lines.map { $0[i].count }.max() ?? 0) }
        var out = [Self.row(header, widths), "|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|"]
        out += lines.map { Self.row($0, widths) }
        return out.joined(separator: "\n")
    }

    func notes() -> [String] {
        var seen = Set<String>()
        var out: [String] = []
        for c in cases {
            for (engine, rs) in (results[c.id] ?? [:]).sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                for note in rs.flatMap(\.notes) where seen.insert("\(c.id) \(engine.rawValue) \(note)").inserted {
                    out.append("note: \(c.id) \(engine.rawValue): \(note)")
                }
            }
        }
        return out
    }

    /// `[{workload, engine, value, unit, better}]`, one object per workload name of issue 9
    /// and engine that measured it (a value that is n/a is left out).
    func json() throws -> Data {
        var array: [[String: Any]] = []
        for c in cases {
            for o in c.outputs {
                guard let name = o.json else { continue }
                for engine in c.engines {
                    guard let v = median(c, engine, o.key), v.isFinite else { continue }
                    array.append(["workload": name, "engine": engine.rawValue, "value": v, "unit": o.unit, "better": o.higherIsBetter ? "higher" : "lower"])
                }
            }
        }
        return try JSONSerialization.data(withJSONObject: array, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    }
}
