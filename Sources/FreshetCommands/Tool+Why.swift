import Foundation
import Freshet

extension Tool {
    func why(_ options: Command.WhyOptions) -> Int32 {
        guard let store = openReadOnly(options.directory) else { return 2 }
        defer { store.close() }
        let d: Diagnosis
        do {
            let now: Date? = if case .end = options.point { Date() } else { nil }
            d = try store.why(options.collection, at: options.point, now: now, policy: options.policy)
        } catch {
            standardError("freshet: \(Self.errorText(error.message))")
            return 2
        }
        let policy = Self.name(d.policy)
        if let path = options.svg {
            do {
                try Data(d.svg().utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                standardError("freshet: cannot write \(path): \(error.localizedDescription)")
                return 2
            }
        }
        if options.json {
            standardOutput(JSONLineWriter.line(.object([
                ("collection", .string(d.collection)), ("verdict", .string(d.verdict.rawValue)), ("summary", .string(d.summary)),
                ("policy", .string(policy)), ("time", .string(LogRecord.iso8601(d.time))), ("status", .string(d.status.description)),
                ("stale", .bool(d.freshness.isStale)), ("freshUntil", .optional(d.freshness.freshUntil.map(LogRecord.iso8601))),
                ("maskingMutations", .array(d.maskingMutations.map(Self.json))),
                ("timeline", .array(d.timeline.map { r in
                    .object([("lsn", .uint(r.lsn.rawValue)), ("time", .string(LogRecord.iso8601(r.timestamp))), ("kind", .string(r.kind.name)),
                             ("collection", .string(r.collection)), ("summary", .string(r.summary))])
                })),
            ])))
            return 0
        }
        standardOutput("\(TerminalEscaping.escaped(d.collection)): \(TerminalEscaping.escaped(d.summary))")
        standardOutput("  judged at \(LogRecord.iso8601(d.time)) under policy \(policy); status \(TerminalEscaping.escaped(d.status.description))")
        if d.timeline.isEmpty {
            standardOutput("  timeline: no records")
        } else {
            standardOutput("  timeline:")
            for r in d.timeline { standardOutput("  " + Self.textLine(r)) }
        }
        return 0
    }

    static func name(_ policy: FreshnessPolicy) -> String {
        switch policy {
        case .http: "http"
        case .always: "always"
        case .manual: "manual"
        case .maxAge(let d): "maxAge=\(d.components.seconds)"
        }
    }
}
