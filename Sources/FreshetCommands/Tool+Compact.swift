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
        // The checkpoint before: a compaction overtaken by another one finds a later one.
        let before = Self.latestCheckpointLSN(in: store)
        do {
            report = try store.compact(keeping: options.keep ?? CompactionPolicy().keep) { p in
                // Only a large log gets progress lines.
                guard p.total >= 65_536 else { return }
                standardError("freshet: compact: \(p.phase.rawValue) \(p.done) of \(p.total) records")
            }
        } catch {
            // Overtaken: another compaction (another process) committed while this one folded.
            // The store is compacted, which is what was asked: exit 0, the notice on standard
            // error (trial finding 11; docs/operations.md, exit status).
            let overtaken = error.code == .locked && Self.latestCheckpointLSN(in: store) != before
            store.close()
            standardError("freshet: \(error.message)")
            if overtaken { return options.vacuum ? vacuum(path) : 0 }
            return error.code == .corruptRecord || error.code == .checksumMismatch || error.code == .unknownEventKind ? 1 : 2
        }
        store.close()
        if let checkpoint = report.checkpoint {
            let window = report.windowStart.map { "; kept the window from LSN \($0)" } ?? "; no record is inside the window"
            standardOutput("compacted \(path): \(checkpoint) at \(LogRecord.iso8601(checkpoint.writtenAt)); removed \(Self.counted(report.removedRecords, "record")), kept \(Self.counted(report.keptRecords, "proposal")) of pending mutations\(window)")
        } else {
            standardOutput("nothing to compact in \(path): every record since the last checkpoint is inside the window")
        }
        return options.vacuum ? vacuum(path) : 0
    }

    /// The latest checkpoint's LSN: nil when there is none, or (`.zero`) when it cannot be read —
    /// the compaction then meets and reports that error itself.
    private static func latestCheckpointLSN(in store: Store) -> LSN? {
        do {
            return try store.latestCheckpoint()?.lsn
        } catch {
            return .zero
        }
    }

    /// `--vacuum` after a compaction: 0, 1 when another process has the store open, else 2.
    private func vacuum(_ path: String) -> Int32 {
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
