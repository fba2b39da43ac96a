import Foundation
import Freshet

extension Tool {
    func stats(_ options: Command.StoreOptions) -> Int32 {
        guard let store = openReadOnly(options.directory) else { return 2 }
        defer { store.close() }
        let s: StoreStatistics
        do {
            s = try store.statistics()
        } catch {
            standardError("freshet: \(Self.errorText(error.message))")
            return 2
        }
        let kinds = s.recordsByKind.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
        if options.json {
            func point(_ p: (lsn: LSN, time: Date)?) -> JSONValue {
                p.map { .object([("lsn", .uint($0.lsn.rawValue)), ("time", .string(LogRecord.iso8601($0.time)))]) } ?? .null
            }
            standardOutput(JSONLineWriter.line(.object([
                ("records", .int(Int64(s.records))), ("unreadableRecords", .int(Int64(s.unreadableRecords))),
                ("recordsByKind", .object(kinds.map { ($0.key, .int(Int64($0.value))) })),
                ("logBytes", .int(Int64(s.logBytes))), ("fileBytes", .int(Int64(s.fileBytes))), ("mapBytes", .int(Int64(s.mapBytes))),
                ("pageSize", .int(Int64(s.pageSize))), ("usedPages", .int(Int64(s.usedPages))), ("freePages", .int(Int64(s.freePages))),
                ("oldest", point(s.oldest)), ("newest", point(s.newest)),
                ("pendingMutations", .int(Int64(s.pendingMutations))),
                ("activeReaders", .int(Int64(s.activeReaders))), ("readerSlots", .int(Int64(s.readerSlots))),
                ("entriesByDatabase", .object(s.entriesByDatabase.sorted { $0.key < $1.key }.map { ($0.key, .int(Int64($0.value))) })),
                ("collections", .array(s.collections.map { c in
                    .object([("name", .string(c.name)), ("records", .int(Int64(c.records))), ("logBytes", .int(Int64(c.logBytes))),
                             ("rows", .int(Int64(c.rows))), ("rowBytes", .int(Int64(c.rowBytes)))])
                })),
            ])))
            return reportUnreadable(s.unreadableRecords, in: options.directory)
        }
        func when(_ p: (lsn: LSN, time: Date)?) -> String { p.map { "LSN \($0.lsn) at \(LogRecord.iso8601($0.time))" } ?? "none" }
        standardOutput("store        \(options.directory)")
        standardOutput("records      \(s.records) (\(s.unreadableRecords) unreadable), \(s.logBytes) bytes")
        standardOutput("oldest       \(when(s.oldest))")
        standardOutput("newest       \(when(s.newest))")
        standardOutput("by kind      \(kinds.isEmpty ? "none" : kinds.map { "\($0.key) \($0.value)" }.joined(separator: ", "))")
        standardOutput("file         data.mdb \(s.fileBytes) bytes, map \(s.mapBytes) bytes, page \(s.pageSize) bytes")
        standardOutput("pages        \(s.usedPages) used, \(s.freePages) free (reused by later writes)")
        standardOutput("pending      \(s.pendingMutations) mutation\(s.pendingMutations == 1 ? "" : "s")")
        standardOutput("readers      \(s.activeReaders) read transaction\(s.activeReaders == 1 ? "" : "s") open (besides this one), \(s.readerSlots) slots")
        standardOutput("collections  largest first: records, log bytes, rows, row bytes")
        for c in s.collections {
            standardOutput("  \(TerminalEscaping.escaped(c.name))  \(c.records) records  \(c.logBytes) log bytes  \(c.rows) rows  \(c.rowBytes) row bytes")
        }
        return reportUnreadable(s.unreadableRecords, in: options.directory)
    }

    /// 0, or 1 with one line on standard error when some records do not decode.
    private func reportUnreadable(_ count: Int, in path: String) -> Int32 {
        guard count > 0 else { return 0 }
        standardError("freshet: \(count) unreadable record\(count == 1 ? "" : "s") in \(path)")
        return 1
    }
}
