import Foundation

extension Store {
    /// Explains why `collection` is fresh, stale, failing or empty at `point` (replayed from the
    /// log, the store is only read), judged at `now` (nil: the time of the last event taken; a
    /// checkpoint counts as its through-time, `LogFolder.lastEventTime`) under `policy` when
    /// given, else under the policy the last refresh of the collection recorded (``ReadPolicy``,
    /// in its `fetched`, `notModified` or `fetchFailed` record), else (a log written before
    /// policies were recorded, or no refresh yet) under the store's
    /// ``Configuration/defaultFreshness``. ``Diagnosis/policySource`` says which.
    ///
    /// Unreadable records and missing LSNs are skipped and listed in ``Diagnosis/problems``:
    /// `.lsn(4)` of a log missing LSN 4 judges the state after LSN 3.
    ///
    /// - Throws: ``ToolError/pastEnd``, ``ToolError/beforeFirstRecord``, ``ToolError/beforeCheckpoint``, ``ToolError/store``.
    public func why(_ collection: String, at point: ReplayPoint = .end, now: Date? = nil, policy: FreshnessPolicy? = nil) throws(ToolError) -> Diagnosis {
        do {
            return try whyUntyped(collection, at: point, now: now, override: policy)
        } catch {
            throw ToolError.wrapping(error, doing: "explaining \(collection) in \(displayPath)")
        }
    }

    private func whyUntyped(_ collection: String, at requested: ReplayPoint, now: Date?, override: FreshnessPolicy?) throws -> Diagnosis {
        try checkOpen()
        let folder = try LogFolder(store: self)
        let point = try folder.reachablePoint(requested)
        var timeline: [LogRecord] = []
        try folder.run(to: point, visit: { record in
            guard record.event.affectedCollections(primary: record.collection).contains(collection) else { return }
            timeline.append(record)
            if timeline.count > 200 { timeline.removeFirst(100) }
        })
        if case .time(let time) = point, folder.lastFolded == nil {
            throw ToolError(.beforeFirstRecord, "\(LogRecord.iso8601(time)) is before the first record of \(displayPath)")
        }
        let judgedAt: Date = now ?? {
            if case .time(let t) = point { return ReplayPoint.judgingTime(asked: t, lastTaken: folder.lastEventTime) }
            return folder.lastEventTime ?? Date(timeIntervalSince1970: 0)
        }()
        let policy: FreshnessPolicy
        let source: Diagnosis.PolicySource
        if let override {
            (policy, source) = (override, .given)
        } else if let recorded = try folder.policies()[collection] {
            if let checkpoint = folder.checkpoint, recorded.lsn <= checkpoint.throughLSN {
                // The record that carried it was compacted away; the checkpoint kept the policy.
                (policy, source) = (recorded.policy.freshness, .checkpoint(lsn: checkpoint.lsn, recordedAt: recorded.lsn, retry: recorded.policy.retry))
            } else {
                (policy, source) = (recorded.policy.freshness, .recorded(lsn: recorded.lsn, retry: recorded.policy.retry))
            }
        } else {
            (policy, source) = (configuration.defaultFreshness, .storeDefault)
        }
        let replay = try Self.projection(of: folder, collections: .name(collection), policy: { _ in policy }, now: judgedAt)
        let snapshot = replay.snapshots.first
        let mark = snapshot?.syncMark
        let masking = replay.pending.filter { $0.collections.contains(collection) }
        let freshness = Freshness.evaluate(mark, policy: policy, now: judgedAt)
        let status = snapshot?.status ?? .empty
        let (verdict, summary) = Self.verdict(mark: mark, rows: snapshot?.rows.count ?? 0, freshness: freshness, policy: policy, timeline: timeline)
        var line = summary
        if let resume = Self.resumePoint(mark) { line += "; \(resume)" }
        if !masking.isEmpty {
            line += "; \(masking.count) pending mutation\(masking.count == 1 ? "" : "s") (\(masking.map { "\($0.name) \($0.id), LSN \($0.lsn)" }.joined(separator: ", "))) mask\(masking.count == 1 ? "s" : "") the server's rows"
        }
        var diagnosis = Diagnosis(collection: collection, verdict: verdict, summary: line, policy: policy, policySource: source, time: judgedAt, status: status, freshness: freshness,
                                  maskingMutations: masking, timeline: Array(timeline.suffix(50)), syncMark: mark)
        diagnosis.checkpoint = folder.checkpoint
        diagnosis.problems = folder.problems
        return diagnosis
    }

    /// Where the next refresh of an infinite list starts when a revalidation of its loaded
    /// pages did not finish (``SyncMark/resumePage``; a page failed, the refresh was
    /// cancelled, or it is still running): `the revalidation of the loaded pages stopped
    /// before page 2 (https://api.test/p?page=3): the next refresh resumes there`. Nil otherwise.
    static func resumePoint(_ mark: SyncMark?) -> String? {
        guard let mark, let k = mark.resumePage, k < mark.pages.count else { return nil }
        return "the revalidation of the loaded pages stopped before \(LogRecord.page(k, mark.pages[k].url)): the next refresh resumes there"
    }

    /// When the current run of failures began, for `offline since …` / `failing since …`:
    /// ` 2026-…Z (LSN 31)`. The first failure's record when the timeline holds the whole run;
    /// else, when its record was compacted away (or is older than the timeline), what the
    /// SyncMark kept: the last attempt's time and LSN (``SyncMark/lastAttemptAt``,
    /// ``SyncMark/FailureInfo/lsn``) — exact for a run of one — and ` … or earlier` for a
    /// longer run whose start is gone (trial finding 6: the verdict lost its time and LSN).
    static func failingSince(mark: SyncMark, error: SyncMark.FailureInfo, timeline: [LogRecord]) -> String {
        // The current run: the fetchFailed records since the last 200 or 304. An invalidation,
        // a local write or a mutation in between does not end it (trial finding: "or earlier"
        // after an invalidation).
        var failures: [LogRecord] = []
        scan: for record in timeline.reversed() {
            switch record.event {
            case .fetched, .notModified: break scan
            case .fetchFailed: failures.append(record)
            default: continue
            }
        }
        let earliest = failures.last.map { ($0.timestamp, $0.lsn) } ?? mark.lastAttemptAt.map { ($0, error.lsn) }
        guard let (time, lsn) = earliest else { return "" }
        let whole = failures.count >= mark.consecutiveFailures || mark.consecutiveFailures == 1
        return " \(LogRecord.iso8601(time)) (LSN \(lsn))\(whole ? "" : " or earlier")"
    }

    /// The verdict, checked in the order ``Snapshot/Status-swift.enum/stored(rows:mark:policy:now:)`` checks.
    static func verdict(mark: SyncMark?, rows: Int, freshness: FreshnessVerdict, policy: FreshnessPolicy, timeline: [LogRecord]) -> (Diagnosis.Verdict, String) {
        func at(_ date: Date?, _ lsn: LSN?) -> String {
            (date.map { " at \(LogRecord.iso8601($0))" } ?? "") + (lsn.map { " (LSN \($0))" } ?? "")
        }
        guard let mark else {
            if let last = timeline.last, case .evicted(let e) = last.event {
                return (.evicted, "evicted\(at(last.timestamp, last.lsn)) after \(LogRecord.seconds(e.unobservedMicros)) unobserved (gcTime \(LogRecord.seconds(e.gcTimeMicros))): "
                        + "no rows or SyncMark are stored (the log keeps their history until compaction); the next observe refetches")
            }
            return (.neverFetched, "never fetched: no event of this collection is in the log")
        }
        let lastSync = mark.validatedAt.map { "rows last synced at \(LogRecord.iso8601($0))" } ?? "no rows ever synced"
        if mark.consecutiveFailures > 0, let error = mark.lastError {
            let since = failingSince(mark: mark, error: error, timeline: timeline)
            let offline = ["cannotConnect", "timedOut", "connectionLost"].contains(error.reason)
            let attempts = "\(mark.consecutiveFailures) failed attempt\(mark.consecutiveFailures == 1 ? "" : "s"), last \(error.reason)\(error.status.map { " \($0)" } ?? ""): \(error.message)"
            // A failure does not make rows stale: the line says what their freshness is, so
            // "offline" beside "status fresh" reads as what it is (trial finding).
            if offline {
                return (.offline, "offline since\(since): \(attempts); serving \(lastSync) while offline; \(freshness.reason)")
            }
            return (.failing, "failing since\(since): \(attempts); showing \(lastSync); \(freshness.reason)")
        }
        guard mark.validatedAt != nil else {
            if let invalidated = mark.invalidatedAt {
                return (.invalidated, "invalidated\(at(invalidated, mark.invalidatedLSN)) and never fetched")
            }
            if rows > 0 {
                // The last localWrite record, not `rowsLSN` (where the rows last changed: a
                // write of the same values changes nothing).
                let lastWrite = timeline.last { if case .localWrite = $0.event { true } else { false } }
                let last = lastWrite.map { "last local write at LSN \($0.lsn)" } ?? "rows last changed at LSN \(mark.rowsLSN)"
                return (.localOnly, "local-only: \(rows) row\(rows == 1 ? "" : "s") written locally (\(last)), never fetched; fresh by definition")
            }
            return (.neverFetched, "never fetched")
        }
        // fetched and notModified records name their own collection.
        let lastValidation = timeline.last { record in
            switch record.event {
            case .fetched, .notModified: true
            default: false
            }
        }
        let by304: Bool = if case .notModified? = lastValidation?.event { true } else { false }
        let validated = "last validated by \(by304 ? "a 304" : "a 200")\(at(mark.validatedAt, lastValidation?.lsn))"
        if let invalidated = mark.invalidatedAt {
            return (.invalidated, "invalidated\(at(invalidated, mark.invalidatedLSN)) and not fetched since; \(validated)")
        }
        if freshness.isStale {
            if freshness.reason.hasPrefix("Cache-Control no-") { return (.noStoreOrNoCache, "stale: \(freshness.reason); \(validated)") }
            return (.staleByAge, "stale by age: \(freshness.reason); \(validated)")
        }
        if by304 { return (.renewedBy304, "fresh, renewed by a 304: \(freshness.reason); \(validated)") }
        return (.fresh, "fresh: \(freshness.reason); \(validated)")
    }
}
