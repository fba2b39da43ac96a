import Foundation
import Freshet

/// What the stress child appends and how the parent recognises each event in the log again.
///
/// Every writer task `k` of a child writes to its own collections (`local-t<k>`,
/// `remote-t<k>`), one event at a time, so the task's events in the log must be a prefix of
/// what it attempted, in order. Each event carries a key the parent can read back from the
/// log record: the first row ID for `localWrite` and `fetched`, the mutation ID for
/// `mutationProposed`, `mutationConfirmed` and `mutationRolledBack`.
enum Workload {
    /// The kinds of step a writer task takes, with their weights out of 100.
    enum Step: String, CaseIterable, Sendable {
        case localWrite, fetch, propose, confirm, rollBack
        /// Compaction: see ``Workload/compact(_:draw:)``.
        case compact

        var weight: UInt64 {
            switch self {
            case .localWrite: 35
            case .fetch: 25
            case .propose: 25
            case .confirm: 10
            case .rollBack: 5
            case .compact: 2
            }
        }

        static func pick(_ random: RandomSource) -> Step {
            let total = allCases.reduce(0) { $0 + $1.weight }
            var roll = random.next() % total
            for step in allCases {
                if roll < step.weight { return step }
                roll -= step.weight
            }
            return .localWrite
        }
    }

    /// One compaction step of the child: `Store.compact(keeping:)` with a window drawn from
    /// `draw` — none at all one time in three, otherwise 0–20 ms, so the checkpoint lands just
    /// behind the writers (a writer task appends every few hundred microseconds).
    ///
    /// Returns the words after `compact -` on the `ack` line: `CHECKPOINT_LSN THROUGH_LSN`, or
    /// `none` when nothing was old enough, or `locked` when another task of the same child
    /// compacted meanwhile (the store says so with ``StoreError/Code/locked``; nothing changed).
    ///
    /// Compactions are not serialized: writer tasks of one child compact concurrently, as an
    /// app compacting from two tasks (or a task and an app extension) would. The store
    /// serializes them itself — a compaction overtaken by another one that committed a
    /// checkpoint meanwhile throws ``StoreError/Code/locked`` and removes nothing — so
    /// `locked` is an expected outcome; any other error fails the child (exit status 2) and
    /// with it the run. (Before `Store.compact` threw `locked` there, the overtaken compaction
    /// failed with a misleading `corruptRecord` and the child held a `Mutex` around each
    /// compaction: docs/reliability.md, "Stress".)
    static func compact(_ store: Store, draw: UInt64) throws(StoreError) -> String {
        let window: Duration = draw % 3 == 0 ? .zero : .milliseconds(Int64(draw / 3 % 21))
        do {
            let report = try store.compact(keeping: window)
            guard let checkpoint = report.checkpoint else { return "none" }
            return "\(checkpoint.lsn) \(checkpoint.throughLSN)"
        } catch where error.code == .locked {
            return "locked"
        }
    }

    static func localCollection(_ task: Int) -> String { "local-t\(task)" }
    static func remoteCollection(_ task: Int) -> String { "remote-t\(task)" }
    static func mutationName(_ task: Int) -> String { "stress-t\(task)" }

    /// The writer task a collection belongs to, from its `-t<k>` suffix.
    static func task(ofCollection name: String) -> Int? {
        guard let range = name.range(of: "-t", options: .backwards) else { return nil }
        return Int(name[range.upperBound...])
    }

    /// The key of a log record's event (see the type's comment); nil for kinds the child
    /// never writes.
    static func key(of event: Event) -> String? {
        switch event {
        case .localWrite(let changes):
            guard case .upsert(let row)? = changes.ops.first else { return nil }
            return row.id
        case .fetched(let fetched): return fetched.rows.first?.id
        case .mutationProposed(let p): return p.id.description
        case .mutationConfirmed(let c): return c.id.description
        case .mutationRolledBack(let r): return r.id.description
        default: return nil
        }
    }

    /// A mutation ID drawn from the task's random source, so a run is reproducible from its seed.
    static func mutationID(_ random: RandomSource) -> MutationID {
        let a = random.next(), b = random.next()
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: a >> (8 * i))
            bytes[8 + i] = UInt8(truncatingIfNeeded: b >> (8 * i))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 9562 variant
        let uuid = UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                               bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        return MutationID(uuid)
    }
}
