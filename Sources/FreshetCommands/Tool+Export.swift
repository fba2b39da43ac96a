import Foundation
import Freshet

extension Tool {
    func export(_ options: Command.ExportOptions) -> Int32 {
        guard let store = openReadOnly(options.directory) else { return 2 }
        defer { store.close() }
        guard options.from <= max(store.lastLSN, LSN(1)) else { return reportPastEnd(options.from, of: store, in: options.directory) }
        let result: (written: Int, skipped: [StoreProblem], missing: [StoreProblem])
        do {
            result = try store.exportLog(from: options.from, redaction: Redaction(fields: Set(options.redact)), standardOutput)
        } catch {
            standardError("freshet: \(Self.errorText(error.message))")
            return 2
        }
        for problem in result.skipped { standardError("freshet: skipped: \(problem)") }
        return max(reportMissing(result.missing, in: options.directory), result.skipped.isEmpty ? 0 : 1)
    }

    func importLog(_ options: Command.ImportOptions) -> Int32 {
        let data: Data
        if options.file == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: options.file))
            } catch {
                var isDirectory: ObjCBool = false
            let what = FileManager.default.fileExists(atPath: options.file, isDirectory: &isDirectory) && isDirectory.boolValue
                ? "it is a directory, not a JSON Lines file" : error.localizedDescription
            standardError("freshet: cannot read \(options.file): \(what)")
                return 2
            }
        }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasSuffix("\r") ? String(line.dropLast()) : String(line)
        }
        do {
            let result = try Store.importLog(lines: lines, into: URL(fileURLWithPath: options.directory), through: options.through)
            standardOutput("imported \(result.records) \(result.records == 1 ? "record" : "records") through LSN \(result.lastLSN) into \(options.directory)")
            return 0
        } catch {
            let source = options.file == "-" ? "standard input" : options.file
            standardError("freshet: \(source): \(Self.errorText(error.message))")
            return 2
        }
    }
}
