import Foundation
import Freshet

extension Tool {
    func verify(_ options: Command.StoreOptions) -> Int32 {
        if case .childProcess(let executable) = containment { return verifyInChild(options, executable: executable) }
        guard let store = openReadOnly(options.directory) else { return 2 }
        defer { store.close() }
        let report: VerifyReport
        do {
            report = try store.verify()
        } catch {
            standardError("freshet: \(Self.errorText(error.message))")
            return 2
        }
        var w = JSONWriter(capacity: 1024)
        for p in report.problems {
            if options.json {
                w.object { o in
                    o.field("type", string: "problem")
                    o.field("database", string: p.database)
                    o.field("collection") { $0.string(orNull: p.collection) }
                    o.field("rowID") { $0.string(orNull: p.rowID) }
                    o.field("lsn") { $0.lsn(orNull: p.lsn) }
                    o.field("message", string: p.message)
                }
                standardOutput(w.takeLine())
            } else {
                standardOutput("PROBLEM  \(p)")
            }
        }
        if options.json {
            w.object { o in
                o.field("type", string: "summary")
                o.field("ok", bool: report.isOK)
                o.field("records", number: report.recordCount)
                o.field("lastLSN", number: report.lastLSN.rawValue)
                o.field("comparedEntries", number: report.comparedEntries)
                o.field("problems", number: report.problems.count)
            }
            standardOutput(w.takeLine())
        } else if report.isOK {
            standardOutput("ok: \(Self.counted(report.recordCount, "record")) through LSN \(report.lastLSN) replay to the stored state (\(report.comparedEntries) entries compared)")
        }
        guard report.isOK else {
            let n = report.problems.count
            standardError("freshet: \(Self.counted(n, "problem")) in \(options.directory); first: \(report.problems[0])")
            return 1
        }
        return 0
    }
}
