import Foundation
import FreshetLMDB

extension Store {
    /// Writes the log as JSON Lines, one record per line in LSN order (docs/log-format.md §13),
    /// handing each line (without its newline) to `line`. Reads in chunks of 4,096 records, one
    /// short read transaction each; the store is only read. A `checkpoint` record is written
    /// with its whole state (its entries; the JSON of `rows` entries redacted like any row).
    ///
    /// - Parameters:
    ///   - from: the first LSN to write.
    ///   - redaction: row fields to replace; credential headers are always replaced.
    /// - Returns: the records written, the records skipped because they do not decode
    ///   (a JSON Lines file cannot carry them), and the LSNs missing from the range written
    ///   (one problem per gap, by the rule `verify` applies: ``LSNContinuity``), which the
    ///   file then lacks too (`import` refuses such a file).
    /// - Throws: ``ToolError/store`` when the store cannot be read.
    public func exportLog(from: LSN = LSN(1), redaction: Redaction = Redaction(), _ line: (String) -> Void) throws(ToolError) -> (written: Int, skipped: [StoreProblem], missing: [StoreProblem]) {
        try exportLog(from: from, redaction: redaction, lineBytes: { line(String(decoding: $0, as: UTF8.self)) })
    }

    /// ``exportLog(from:redaction:_:)`` handing each line as its UTF-8 bytes (valid for the
    /// call only): `freshet export` copies them into its output buffer with no string made
    /// per line (docs/performance.md, issue 8 speed round 9, dump and export).
    package func exportLog(from: LSN = LSN(1), redaction: Redaction = Redaction(), lineBytes: (UnsafeRawBufferPointer) -> Void) throws(ToolError) -> (written: Int, skipped: [StoreProblem], missing: [StoreProblem]) {
        var written = 0
        var skipped: [StoreProblem] = []
        var missing: [StoreProblem] = []
        var next = from
        var done = false
        var writer = JSONWriter(capacity: 4096)
        do {
            try checkOpen()
            // The end when the export starts: a live store's later appends are left out.
            let (end, assigned) = try LogFolder.logEnd(of: self)
            var continuity = LSNContinuity(after: try env.read { txn in try Self.continuityFloor(before: from, dbs: state.dbs, in: txn) }, from: from)
            while !done, next <= end {
                done = true
                var records: [LogRecord] = []
                try env.read { txn in
                    try txn.forEach(state.dbs.log, from: next.keyBytes) { key, value in
                        guard key.count == 8 else { return true }
                        if records.count == LogFolder.chunkSize {
                            done = false
                            return false
                        }
                        // A damaged key stands for its intact record's LSN (``LogPosition``).
                        let position = LogPosition(key: key, value: value)
                        let lsn = position.lsn
                        // Read already: where the chunk's `MDB_SET_RANGE` landed on a damaged key.
                        if lsn < next { return true }
                        if lsn > end { return false }
                        if let gap = continuity.take(lsn) { missing.append(gap) }
                        next = lsn.next
                        do throws(StoreError) {
                            if let error = position.damagedKeyError { throw error }
                            records.append(try LogRecord.decode(Array(value), expectedLSN: lsn))
                        } catch {
                            skipped.append(StoreProblem(database: "log", lsn: lsn, message: error.message))
                        }
                        return true
                    }
                }
                // Lines are written outside the read transaction.
                for record in records {
                    writer.bytes.removeAll(keepingCapacity: true)
                    Self.writeExportLine(record, redaction: redaction, into: &writer)
                    writer.bytes.withUnsafeBytes(lineBytes)
                    written += 1
                }
            }
            // Records lost at the end of the log (`meta.lastLSN` still counts them).
            if let gap = continuity.end(assigned: assigned) { missing.append(gap) }
        } catch {
            throw ToolError.wrapping(error, doing: "exporting \(displayPath)")
        }
        return (written, skipped, missing)
    }

    /// One record as a JSON Lines object: `lsn`, `micros`, `time`, `kind`, `collection`, `event`.
    static func writeExportLine(_ record: LogRecord, redaction: Redaction, into w: inout JSONWriter) {
        w.object { o in
            o.field("lsn", number: record.lsn.rawValue)
            o.field("micros", number: ByteWriter.micros(record.timestamp))
            o.field("time") { LogRecord.writeISO8601(record.timestamp, into: &$0) }
            o.field("kind", string: record.kind.name)
            o.field("collection", string: record.collection)
            o.field("event") { EventJSON.write(record.event, redaction: redaction, into: &$0) }
        }
    }
}
