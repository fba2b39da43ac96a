import Foundation
import FreshetLMDB

extension Store {
    /// Builds a new store in `directory` from JSON Lines written by ``exportLog(from:redaction:_:)``:
    /// every record keeps its LSN and timestamp and is folded with the same ``Fold`` as a live
    /// append, so the new store replays and verifies like the original (same LSNs, same
    /// projection, the same bytes in every database). Blank lines are skipped.
    ///
    /// ```swift
    /// let text = try String(contentsOf: URL(filePath: "bug-1234.jsonl"), encoding: .utf8)
    /// try Store.importLog(lines: text.split(separator: "\n").map(String.init), into: URL(filePath: "bug-1234-store"))
    /// ```
    ///
    /// A compacted log's latest `checkpoint` line is the starting state, as replay uses it
    /// (docs/log-format.md §6.12, §13.2): its entries are written first (with `rowIndex`
    /// derived from `rows`), records up to its `throughLSN` (the kept proposals) are stored
    /// without being folded, and every later record is folded, the checkpoint included (which
    /// sets `meta.checkpoint`).
    ///
    /// Every line is checked before anything is written; the directory must not exist or be
    /// empty (an existing store is never written into). What only the fold can refuse (a
    /// `mutationConfirmed` of a mutation never proposed) is found while writing: then the
    /// store files and the directories this call created (mode 0700, as ``Store`` creates
    /// one) are removed again, so the directory is as it was. The store is closed when this
    /// returns. Times must lie in the years 0001 to 9999.
    ///
    /// - Parameter through: the last LSN to import; later lines are checked but not imported.
    /// - Returns: the records imported and the last LSN.
    /// - Throws: ``ToolError/invalidLine`` (not JSON, a missing or mistyped field, `micros`
    ///   outside the years 0001 to 9999, LSNs not increasing, an event the store or its fold
    ///   would refuse — the message names the line),
    ///   ``ToolError/unknownKind``, ``ToolError/missingRecords`` (LSNs missing where no
    ///   checkpoint in the file accounts for them: the rule `verify` applies, ``LSNContinuity``;
    ///   the file may start at any LSN), ``ToolError/pastEnd`` (`through` after the file's last
    ///   record), ``ToolError/beforeCheckpoint`` (`through` falls after a
    ///   checkpoint's `throughLSN` but before the checkpoint itself), ``ToolError/notEmpty`` (also for a path that is a file, or a
    ///   store another import wrote meanwhile), ``ToolError/nothingToImport`` (no record: nothing
    ///   is created), ``ToolError/store`` when the store cannot be created or written.
    @discardableResult
    public static func importLog(lines: some Sequence<String>, into directory: URL, through: LSN? = nil) throws(ToolError) -> (records: Int, lastLSN: LSN) {
        var records: [LogRecord] = []
        // The line of each record in `records`: a refusal found while folding names it.
        var recordLines: [Int] = []
        var lineNumber = 0
        // Every record's LSN and line, the ones after `through` too: the gap check reads the whole file.
        var parsed: [(lsn: LSN, line: Int)] = []
        var fileCheckpointThrough: LSN?
        for text in lines {
            lineNumber += 1
            if text.allSatisfy(\.isWhitespace) { continue }
            let record = try parseLine(text, number: lineNumber)
            if let last = parsed.last, record.lsn <= last.lsn {
                throw ToolError(.invalidLine, "line \(lineNumber): LSN \(record.lsn) does not follow LSN \(last.lsn)")
            }
            parsed.append((record.lsn, lineNumber))
            if case .checkpoint(let c) = record.event { fileCheckpointThrough = c.throughLSN }
            if let through, record.lsn > through {
                if case .checkpoint(let c) = record.event, let last = records.last, last.lsn > c.throughLSN {
                    throw ToolError(.beforeCheckpoint, "line \(lineNumber): LSN \(through) is before the checkpoint at LSN \(record.lsn), whose state the records after LSN \(c.throughLSN) build on; import through LSN \(record.lsn) or later, or through LSN \(c.throughLSN) or earlier")
                }
                continue
            }
            records.append(record)
            recordLines.append(lineNumber)
        }
        // The latest checkpoint is the starting state (docs/log-format.md §6.12, §13.2): its
        // entries are loaded, records up to its throughLSN (the kept proposals) only stored,
        // and the records after it folded, as replay does.
        let checkpoint: Event.Checkpoint? = records.last { if case .checkpoint = $0.event { true } else { false } }.flatMap {
            if case .checkpoint(let c) = $0.event { c } else { nil }
        }
        try checkContinuity(parsed, checkpointThrough: fileCheckpointThrough)
        if let through, let last = parsed.last, through > last.lsn {
            throw ToolError(.pastEnd, "LSN \(through) is past the end of the log (last LSN \(last.lsn), line \(last.line)); no store was created")
        }
        guard !records.isEmpty else {
            throw ToolError(.nothingToImport, parsed.isEmpty ? "nothing to import: no record in the file; no store was created"
                                          : "nothing to import: no record at or before LSN \(through.map(\.description) ?? ""); no store was created")
        }
        let path = directory.standardizedFileURL.path
        // Messages name the directory as the caller did (Store.displayPath).
        let shown = directory.relativePath
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw ToolError(.notEmpty, "\(shown) is a file, not a directory; import builds a new store in a new or empty directory") }
            let contents: [String]
            do {
                contents = try FileManager.default.contentsOfDirectory(atPath: path)
            } catch {
                throw ToolError(StoreError(.storage, "cannot list \(shown): \(error.localizedDescription)"))
            }
            guard contents.isEmpty else { throw ToolError(.notEmpty, "\(shown) is not empty; import builds a new store in a new or empty directory") }
        }
        // One import at a time per directory: an advisory lock on the directory itself
        // (flock(2), released when the descriptor closes), then the emptiness check again
        // under it, so a racing import finds the first one's store instead of its half-made files.
        let lock = try ImportLock(path, shownAs: shown)
        defer { lock.release() }
        do {
            guard try FileManager.default.contentsOfDirectory(atPath: path).isEmpty else {
                lock.removeCreatedDirectories()
                throw ToolError(.notEmpty, "\(shown) is not empty: another import wrote a store there meanwhile; nothing was written")
            }
        } catch let error as ToolError {
            throw error
        } catch {
            lock.removeCreatedDirectories()
            throw ToolError(StoreError(.storage, "cannot list \(shown): \(error.localizedDescription)"))
        }
        do {
            try build(records, lines: recordLines, checkpoint: checkpoint, in: directory, shownAs: shown)
        } catch {
            // A refusal only the fold finds (a confirmation of a mutation never proposed):
            // what this import made is removed, so a retry finds the directory as it was.
            if error.code != .notEmpty { lock.removeStore() }
            throw error
        }
        return (records.count, records.last?.lsn ?? .zero)
    }

    /// Creates the store in `directory` (empty, locked by the caller) and writes `records`,
    /// folding them as a live append would; closes the store.
    /// - Throws: ``ToolError/invalidLine`` naming the line when the fold refuses a record,
    ///   ``ToolError/notEmpty`` when another import's records are there, ``ToolError/store``.
    private static func build(_ records: [LogRecord], lines: [Int], checkpoint: Event.Checkpoint?, in directory: URL, shownAs shown: String) throws(ToolError) {
        var configuration = Configuration(durability: .full)
        configuration.sendsMutations = false
        let store: Store
        do {
            store = try Store(directory: directory, configuration: configuration)
        } catch {
            throw ToolError(error)
        }
        defer { store.close() }
        do {
            var start = 0
            while start < records.count {
                let range = start..<min(start + LogFolder.chunkSize, records.count)
                try store.env.write { txn in
                    // LMDB lets one write transaction run at a time: a second import racing
                    // into the same directory finds the first one's records here.
                    if start == 0, try txn.count(store.state.dbs.log) > 0 {
                        throw ToolError(.notEmpty, "\(shown) is not empty: another import wrote a store there meanwhile; nothing was written")
                    }
                    if start == 0, let checkpoint { try store.state.dbs.load(checkpoint, in: txn) }
                    for i in range {
                        let record = records[i]
                        try txn.put(store.state.dbs.log, key: record.lsn.keyBytes, value: record.encoded(), append: true)
                        if let checkpoint, record.lsn <= checkpoint.throughLSN { continue }
                        do {
                            try Fold.apply(record, to: store.state, in: txn)
                        } catch let error as StoreError where error.code == .invalidEvent {
                            throw ToolError(.invalidLine, "line \(lines[i]): \(error.message); no store was created")
                        }
                    }
                    if let last = range.last { try txn.put(store.state.dbs.meta, key: MetaKey.lastLSN, value: records[last].lsn.keyBytes) }
                }
                start = range.upperBound
            }
        } catch {
            throw ToolError.wrapping(error, doing: "importing into \(shown)")
        }
    }

    /// Refuses a log with LSNs missing where no checkpoint in it accounts for them, by the rule
    /// `verify` applies (``LSNContinuity``). The file may start at any LSN: `export --from`
    /// writes a tail of the log.
    /// - Throws: ``ToolError/missingRecords`` naming the first missing LSN and the line after the gap.
    private static func checkContinuity(_ parsed: [(lsn: LSN, line: Int)], checkpointThrough: LSN?) throws(ToolError) {
        guard let first = parsed.first else { return }
        var continuity = LSNContinuity(after: LSNContinuity.floor(before: LSN(first.lsn.rawValue - 1), checkpointThrough: checkpointThrough))
        for entry in parsed {
            if let gap = continuity.take(entry.lsn) {
                throw ToolError(.missingRecords, "line \(entry.line): \(gap.message), and no checkpoint in the file accounts for it; no store was created")
            }
        }
    }

    /// 0001-01-01T00:00:00.000000Z and 9999-12-31T23:59:59.999999Z in microseconds since 1970.
    static let firstMicros = -62_135_596_800_000_000
    static let lastMicros = 253_402_300_799_999_999

    /// One JSON Lines line as a record, checked as a live append would be.
    static func parseLine(_ text: String, number: Int) throws(ToolError) -> LogRecord {
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(text.utf8))
        } catch {
            throw ToolError(.invalidLine, "line \(number): not a JSON object (\(text.prefix(40).debugDescription)\(text.count > 40 ? "…" : ""))")
        }
        guard let fields = parsed as? [String: Any] else { throw ToolError(.invalidLine, "line \(number): not a JSON object") }
        let o = JSONObject(fields: fields, line: number, path: "")
        let kindName = try o.string("kind")
        guard let kind = EventKind.allCases.first(where: { $0.name == kindName }) else {
            throw ToolError(.unknownKind, "line \(number): unknown event kind \(kindName.debugDescription); this Freshet knows \(EventKind.allCases.map(\.name).joined(separator: ", "))")
        }
        guard let lsn = try o.optionalUInt("lsn"), lsn > 0 else { throw o.error("lsn must be a whole number from 1") }
        let micros = try o.int("micros")
        // Years 0001 to 9999 (ISO 8601's four-digit years, which every tool prints): a time
        // outside them is refused here rather than printed as a year no reader parses.
        guard (Self.firstMicros...Self.lastMicros).contains(micros) else {
            throw o.error("micros \(micros) is outside the years 0001 to 9999 (\(Self.firstMicros) ... \(Self.lastMicros))")
        }
        let collection = try o.string("collection")
        let event = try EventJSON.event(kind: kind, o.object("event"))
        if case .checkpoint(let c) = event {
            // Written by compaction only, so Store.validate refuses it; checked here instead.
            guard collection.isEmpty else { throw ToolError(.invalidLine, "line \(number): a checkpoint has no collection (found \(collection.debugDescription))") }
            guard c.throughLSN.rawValue < lsn else { throw ToolError(.invalidLine, "line \(number): checkpoint throughLSN \(c.throughLSN) is not below its own LSN \(lsn)") }
            guard zip(c.keptLSNs, c.keptLSNs.dropFirst()).allSatisfy({ $0 < $1 }), c.keptLSNs.allSatisfy({ $0 <= c.throughLSN }) else {
                throw ToolError(.invalidLine, "line \(number): checkpoint keptLSNs must ascend and be at most throughLSN \(c.throughLSN)")
            }
        } else {
            do throws(StoreError) {
                try validate(event, in: collection)
            } catch {
                throw ToolError(.invalidLine, "line \(number): \(error.message)")
            }
        }
        return LogRecord(lsn: LSN(lsn), timestamp: Date(timeIntervalSince1970: Double(micros) / 1_000_000), collection: collection, event: event)
    }
}
