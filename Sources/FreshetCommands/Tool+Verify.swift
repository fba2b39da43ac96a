import Foundation
import Freshet

extension Tool {
    func verify(_ options: Command.StoreOptions) -> Int32 {
        guard let store = openReadOnly(options.directory) else { return 2 }
        defer { store.close() }
        let report: VerifyReport
        do {
            report = try store.verify()
        } catch {
            standardError("freshet: \(Self.errorText(error.message))")
            return 2
        }
        for p in report.problems {
            if options.json {
                standardOutput(JSONLineWriter.line(.object([
                    ("type", .string("problem")), ("database", .string(p.database)), ("collection", .optional(p.collection)),
                    ("rowID", .optional(p.rowID)), ("lsn", p.lsn.map { .uint($0.rawValue) } ?? .null), ("message", .string(p.message)),
                ])))
            } else {
                standardOutput("PROBLEM  \(p)")
            }
        }
        if options.json {
            standardOutput(JSONLineWriter.line(.object([
                ("type", .string("summary")), ("ok", .bool(report.isOK)), ("records", .int(Int64(report.recordCount))),
                ("lastLSN", .uint(report.lastLSN.rawValue)), ("comparedEntries", .int(Int64(report.comparedEntries))),
                ("problems", .int(Int64(report.problems.count))),
            ])))
        } else if report.isOK {
            standardOutput("ok: \(report.recordCount) records through LSN \(report.lastLSN) replay to the stored state (\(report.comparedEntries) entries compared)")
        }
        guard report.isOK else {
            let n = report.problems.count
            standardError("freshet: \(n) problem\(n == 1 ? "" : "s") in \(options.directory); first: \(report.problems[0])")
            return 1
        }
        return 0
    }
}
