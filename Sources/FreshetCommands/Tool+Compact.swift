import Foundation
import Freshet

extension Tool {
    func compact(_ options: Command.CompactOptions) -> Int32 {
        let path = options.directory
        let store: Store
        do {
            // Opened for writing, so checked first as the read-only tools' open checks:
            // `freshet compact` never creates a store, and says so in the same words.
            try Store.checkExisting(URL(fileURLWithPath: path))
            var configuration = Configuration(durability: .full)
            configuration.sendsMutations = false
            store = try Store(directory: URL(fileURLWithPath: path), configuration: configuration)
        } catch {
            standardError("freshet: cannot open store \(path): \(Self.errorText(error.message))")
            return 2
        }
        let report: CompactionReport
        do {
            report = try store.compact(keeping: options.keep ?? CompactionPolicy().keep) { p in
                // Only a large log gets progress lines.
                guard p.total >= 65_536 else { return }
                standardError("freshet: compact: \(p.phase.rawValue) \(p.done) of \(p.total) records")
            }
        } catch {
            store.close()
            standardError("freshet: \(error.message)")
            return error.code == .corruptRecord || error.code == .checksumMismatch || error.code == .unknownEventKind ? 1 : 2
        }
        store.close()
        if let checkpoint = report.checkpoint {
            let window = report.windowStart.map { "; kept the window from LSN \($0)" } ?? "; no record is inside the window"
            standardOutput("compacted \(path): \(checkpoint) at \(LogRecord.iso8601(checkpoint.writtenAt)); removed \(Self.counted(report.removedRecords, "record")), kept \(Self.counted(report.keptRecords, "proposal")) of pending mutations\(window)")
        } else {
            standardOutput("nothing to compact in \(path): every record since the last checkpoint is inside the window")
        }
        guard options.vacuum else { return 0 }
        do {
            let vacuum = try Store.vacuum(directory: URL(fileURLWithPath: path))
            standardOutput("vacuumed \(path): data.mdb \(vacuum.bytesBefore) → \(vacuum.bytesAfter) bytes")
            return 0
        } catch {
            standardError("freshet: vacuum refused: \(error.message)")
            return error.code == .locked ? 1 : 2
        }
    }
}
