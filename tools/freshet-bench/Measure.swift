import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Timing, memory and size helpers.
enum Measure {
    static func now() -> ContinuousClock.Instant { ContinuousClock.now }

    static func ms(_ d: Duration) -> Double {
        let c = d.components
        return Double(c.seconds) * 1000 + Double(c.attoseconds) / 1e15
    }

    static func seconds(_ d: Duration) -> Double { ms(d) / 1000 }

    /// The process's peak resident set size in bytes (`getrusage` `ru_maxrss`: kilobytes on
    /// Linux, bytes on macOS).
    static func peakRSS() -> Int {
        var usage = rusage()
        #if os(Linux)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Int(usage.ru_maxrss) * 1024
        #else
        getrusage(RUSAGE_SELF, &usage)
        return Int(usage.ru_maxrss)
        #endif
    }

    /// The bytes of every regular file under `path` (a store directory: `data.mdb`, or the
    /// SQLite database with its `-wal` file).
    static func directoryBytes(_ path: String) -> Int {
        guard let e = FileManager.default.enumerator(atPath: path) else { return 0 }
        var total = 0
        while let name = e.nextObject() as? String {
            let attributes: [FileAttributeKey: Any]
            do {
                attributes = try FileManager.default.attributesOfItem(atPath: path + "/" + name)
            } catch {
                continue // removed while we looked: not part of the store
            }
            if attributes[.type] as? FileAttributeType == .typeRegular, !name.hasSuffix("lock.mdb"), !name.hasSuffix("-shm") {
                total += (attributes[.size] as? Int) ?? 0
            }
        }
        return total
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let s = values.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// The `p`-th percentile (0…100) by nearest rank.
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let s = values.sorted()
        let rank = Int((p / 100 * Double(s.count)).rounded(.up)) - 1
        return s[min(max(rank, 0), s.count - 1)]
    }
}

/// What an engine stored, in order: row count and an FNV-1a hash over each row's ID and JSON
/// bytes. Engines agree when their digests are equal.
struct Digest: Sendable, Equatable {
    private(set) var rows = 0
    private(set) var hash: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(id: String, json: some Collection<UInt8>) {
        rows += 1
        for b in id.utf8 { mix(b) }
        mix(0)
        for b in json { mix(b) }
        mix(0)
    }

    private mutating func mix(_ b: UInt8) {
        hash = (hash ^ UInt64(b)) &* 0x100_0000_01b3
    }

    var text: String { "\(rows) rows #\(String(hash, radix: 16))" }
}

/// Counts down arrivals and lets one task wait for the count to reach zero.
final class Countdown: Sendable {
    private struct State {
        var remaining = 0
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    func reset(_ n: Int) { state.withLock { $0.remaining = n } }

    func arrive() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.remaining -= 1
            guard s.remaining == 0 else { return nil }
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { c in
            let done = state.withLock { s -> Bool in
                if s.remaining <= 0 { return true }
                s.waiter = c
                return false
            }
            if done { c.resume() }
        }
    }
}
