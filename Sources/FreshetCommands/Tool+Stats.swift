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
            func point(_ p: (lsn: LSN, time: Date)?, into w: inout JSONWriter) {
                guard let p else { w.null(); return }
                w.object { o in
                    o.field("lsn", number: p.lsn.rawValue)
                    o.field("time") { $0.time(orNull: p.time) }
                }
            }
            var w = JSONWriter(capacity: 4096)
            w.object { o in
                o.field("records", number: s.records)
                o.field("unreadableRecords", number: s.unreadableRecords)
                o.field("recordsByKind") { w in w.object { k in for (name, n) in kinds { k.field(name, number: n) } } }
                o.field("logBytes", number: s.logBytes)
                o.field("fileBytes", number: s.fileBytes)
                o.field("mapBytes", number: s.mapBytes)
                o.field("pageSize", number: s.pageSize)
                o.field("storeFormat", number: s.storeFormat)
                o.field("usedPages", number: s.usedPages)
                o.field("freePages", number: s.freePages)
                o.field("oldest") { point(s.oldest, into: &$0) }
                o.field("newest") { point(s.newest, into: &$0) }
                o.field("pendingMutations", number: s.pendingMutations)
                o.field("activeReaders", number: s.activeReaders)
                o.field("readerSlots", number: s.readerSlots)
                o.field("entriesByDatabase") { w in w.object { e in for (name, n) in s.entriesByDatabase.sorted(by: { $0.key < $1.key }) { e.field(name, number: n) } } }
                o.field("collections") { w in
                    w.array { a in
                        for c in s.collections {
                            a.element {
                                $0.object { e in
                                    e.field("name", string: c.name)
                                    e.field("records", number: c.records)
                                    e.field("logBytes", number: c.logBytes)
                                    e.field("rows", number: c.rows)
                                    e.field("rowBytes", number: c.rowBytes)
                                }
                            }
                        }
                    }
                }
            }
            standardOutput(w.takeLine())
            return max(reportMissing(s.missingRecords, in: options.directory), reportUnreadable(s.unreadableRecords, in: options.directory))
        }
        func when(_ p: (lsn: LSN, time: Date)?) -> String { p.map { "LSN \($0.lsn) at \(LogRecord.iso8601($0.time))" } ?? "none" }
        standardOutput("store        \(options.directory)")
        standardOutput("records      \(s.records) (\(s.unreadableRecords) unreadable), \(s.logBytes) bytes")
        standardOutput("oldest       \(when(s.oldest))")
        standardOutput("newest       \(when(s.newest))")
        standardOutput("by kind      \(kinds.isEmpty ? "none" : kinds.map { "\($0.key) \($0.value)" }.joined(separator: ", "))")
        standardOutput("file         data.mdb \(s.fileBytes) bytes, map \(s.mapBytes) bytes, page \(s.pageSize) bytes")
        standardOutput("pages        \(s.usedPages) used, \(s.freePages) free (reused by later writes)")
        standardOutput("format       store \(s.storeFormat), log records \(LogRecord.formatVersion)\(s.storeFormat < StoreFormat.current ? " (opened read-write with no other process, it becomes store format \(StoreFormat.current))" : "")")
        standardOutput("pending      \(Self.counted(s.pendingMutations, "mutation"))")
        standardOutput("readers      \(Self.counted(s.activeReaders, "read transaction")) open (besides this one), \(s.readerSlots) slots")
        standardOutput("collections  largest first: records, log bytes, rows, row bytes")
        for c in s.collections {
            standardOutput("  \(TerminalEscaping.escaped(c.name))  \(Self.counted(c.records, "record"))  \(c.logBytes) log bytes  \(Self.counted(c.rows, "row"))  \(c.rowBytes) row bytes")
        }
        return max(reportMissing(s.missingRecords, in: options.directory), reportUnreadable(s.unreadableRecords, in: options.directory))
    }

    /// 0, or 1 with one line on standard error when some records do not decode.
    private func reportUnreadable(_ count: Int, in path: String) -> Int32 {
        guard count > 0 else { return 0 }
        standardError("freshet: \(Self.counted(count, "unreadable record")) in \(path)")
        return 1
    }
}
