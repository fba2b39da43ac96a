import Foundation
import Freshet

extension Tool {
    func export(_ options: Command.ExportOptions) -> Int32 {
        guard let store = openReadOnly(options.directory) else { return 2 }
        defer { store.close() }
        guard options.from <= max(store.lastLSN, LSN(1)) else { return reportPastEnd(options.from, of: store, in: options.directory) }
        let result: (written: Int, skipped: [StoreProblem], missing: [StoreProblem])
        do {
            let redaction = Redaction(fields: Set(options.redact))
            if let standardOutputBytes {
                result = try store.exportLog(from: options.from, redaction: redaction, lineBytes: standardOutputBytes)
            } else {
                result = try store.exportLog(from: options.from, redaction: redaction, standardOutput)
            }
        } catch {
            standardError("freshet: \(Self.errorText(error.message))")
            return 2
        }
        for problem in result.skipped { standardError("freshet: skipped: \(problem)") }
        return max(reportMissing(result.missing, in: options.directory), result.skipped.isEmpty ? 0 : 1)
    }

    func importLog(_ options: Command.ImportOptions) -> Int32 {
        let bytes: [UInt8]
        do {
            bytes = try ToolFile.read(options.file)
        } catch {
            standardError("freshet: \(Self.errorText(error.message))")
            return 2
        }
        // Split on the byte: in a Swift String "\r\n" is one Character, so splitting the text on
        // "\n" would never split a CRLF line. One "\r" before each "\n" is dropped (§13).
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == 0x0D ? line.dropLast() : line, as: UTF8.self)
        }
        do {
            let result = try Store.importLog(lines: lines, into: URL(fileURLWithPath: options.directory), through: options.through)
            standardOutput("imported \(Self.counted(result.records, "record")) through LSN \(result.lastLSN) into \(options.directory)")
            return 0
        } catch {
            // An error about the input names the file first; one about the target directory
            // (not empty, cannot be created) names only the directory.
            let aboutInput: Set<ToolError.Code> = [.invalidLine, .unknownKind, .pastEnd, .beforeCheckpoint, .nothingToImport, .missingRecords]
            let source = options.file == "-" ? "standard input" : options.file
            standardError("freshet: " + (aboutInput.contains(error.code) ? "\(source): " : "") + Self.errorText(error.message))
            return 2
        }
    }
}
