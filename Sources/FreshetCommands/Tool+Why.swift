import Foundation
import Freshet

extension Tool {
    func why(_ options: Command.WhyOptions) -> Int32 {
        guard let store = openReadOnly(options.directory) else { return 2 }
        defer { store.close() }
        let d: Diagnosis
        do {
            let now: Date? = if case .end = options.point { Date() } else { nil }
            d = try store.why(options.collection, at: options.point, now: now, policy: options.policy)
        } catch {
            standardError("freshet: \(Self.errorText(error.message))")
            return 2
        }
        let policy = ReadPolicy.name(d.policy)
        let source: String = switch d.policySource {
        case .given: "given by --policy"
        case .recorded(let lsn, let retry):
            "recorded at LSN \(lsn); retries: \(retry.maxAttempts) attempts, base delay \(ReadPolicy.seconds(retry.baseDelay)) s, at most \(ReadPolicy.seconds(retry.maxDelay)) s"
        case .checkpoint(let lsn, let recordedAt, let retry):
            "recorded at LSN \(recordedAt), kept by the checkpoint at LSN \(lsn); retries: \(retry.maxAttempts) attempts, base delay \(ReadPolicy.seconds(retry.baseDelay)) s, at most \(ReadPolicy.seconds(retry.maxDelay)) s"
        case .storeDefault:
            // After a compaction by a version that did not keep policies, the records that
            // held one may be gone with the rest.
            d.checkpoint == nil || d.checkpoint?.keepsPolicies == true
                ? "the store's default: the log records no policy for this collection"
                : "the store's default: no policy is recorded for this collection after the \(d.checkpoint.map(String.init(describing:)) ?? ""); give --policy to judge as the app does"
        }
        if let path = options.svg {
            // Written through the path like a shell redirect, but never into the store itself.
            // A directory (the store's own too) is named as one, as `write` names others.
            if ToolFile.isDirectory(path) {
                standardError("freshet: cannot write \(path): it is a directory, not a file")
                return 2
            }
            guard !ToolFile.isInside(path, directory: options.directory) else {
                standardError("freshet: cannot write \(path): it is inside the store directory \(options.directory); give a path outside it")
                return 2
            }
            do {
                try ToolFile.write(d.svg(), to: path)
            } catch {
                standardError("freshet: \(Self.errorText(error.message))")
                return 2
            }
        }
        if options.json {
            var w = JSONWriter(capacity: 4096)
            w.object { o in
                o.field("collection", string: d.collection)
                o.field("verdict", string: d.verdict.rawValue)
                o.field("summary", string: d.summary)
                o.field("policy", string: policy)
                o.field("policySource") { w in
                    w.object { p in
                        switch d.policySource {
                        case .given: p.field("from", string: "option")
                        case .recorded(let lsn, let retry):
                            p.field("from", string: "log")
                            p.field("lsn", number: lsn.rawValue)
                            p.field("maxAttempts", number: retry.maxAttempts)
                        case .checkpoint(let lsn, let recordedAt, let retry):
                            p.field("from", string: "checkpoint")
                            p.field("lsn", number: recordedAt.rawValue)
                            p.field("checkpointLSN", number: lsn.rawValue)
                            p.field("maxAttempts", number: retry.maxAttempts)
                        case .storeDefault: p.field("from", string: "storeDefault")
                        }
                    }
                }
                o.field("time") { $0.time(orNull: d.time) }
                o.field("status", string: d.status.description)
                o.field("stale", bool: d.freshness.isStale)
                o.field("freshUntil") { $0.time(orNull: d.freshness.freshUntil) }
                // The page the next refresh of an infinite list resumes at (SyncMark.resumePage).
                o.field("resumePage") { w in if let k = d.syncMark?.resumePage { w.number(k) } else { w.null() } }
                o.field("checkpoint") { w in
                    if let checkpoint = d.checkpoint {
                        w.object { c in
                            c.field("lsn", number: checkpoint.lsn.rawValue)
                            c.field("throughLSN", number: checkpoint.throughLSN.rawValue)
                        }
                    } else {
                        w.null()
                    }
                }
                o.field("maskingMutations") { w in w.array { a in for p in d.maskingMutations { a.element { Self.writeJSON(p, into: &$0) } } } }
                o.field("timeline") { w in
                    w.array { a in
                        for r in d.timeline {
                            a.element {
                                $0.object { e in
                                    e.field("lsn", number: r.lsn.rawValue)
                                    e.field("time") { $0.time(orNull: r.timestamp) }
                                    e.field("kind", string: r.kind.name)
                                    e.field("collection", string: r.collection)
                                    e.field("summary", string: r.summary)
                                }
                            }
                        }
                    }
                }
            }
            standardOutput(w.takeLine())
            return reportSkipped(d.problems)
        }
        standardOutput("\(TerminalEscaping.escaped(d.collection)): \(TerminalEscaping.escaped(d.summary))")
        standardOutput("  judged at \(LogRecord.iso8601(d.time)) under policy \(policy) (\(source)); status \(TerminalEscaping.escaped(d.status.description))")
        if let checkpoint = d.checkpoint { standardOutput("  history starts after the \(checkpoint)") }
        if d.timeline.isEmpty {
            standardOutput("  timeline: no records")
        } else {
            standardOutput("  timeline:")
            for r in d.timeline { standardOutput("  " + Self.textLine(r)) }
        }
        return reportSkipped(d.problems)
    }
}
