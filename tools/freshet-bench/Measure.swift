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

    /// CPU time of the whole process (every thread, user and system), `CLOCK_PROCESS_CPUTIME_ID`,
    /// in milliseconds. Unlike wall time it does not grow when other processes take the cores.
    static func cpuMs() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
        return Double(t.tv_sec) * 1000 + Double(t.tv_nsec) / 1e6
    }

    /// Resident memory now and its peak since the last ``resetPeak()``: `VmRSS` and `VmHWM`
    /// of `/proc/self/status` (Linux, proc(5)); nil where there is no such file.
    static func resident() -> (now: Int, peak: Int)? {
        let text: String
        do {
            text = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        } catch {
            return nil // not Linux (or no procfs): the caller falls back to ru_maxrss
        }
        func kilobytes(_ field: String) -> Int? {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return nil }
            return line.split(separator: " ").compactMap { Int($0) }.first
        }
        guard let now = kilobytes("VmRSS"), let peak = kilobytes("VmHWM") else { return nil }
        return (now * 1024, peak * 1024)
    }

    /// Sets the peak resident size to the current one (writes `5` to `/proc/self/clear_refs`,
    /// Linux ≥ 4.0, proc(5)), so ``resident()`` then gives the peak of what follows alone.
    /// Returns false where that is not possible.
    static func resetPeak() -> Bool {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
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

/// Peak memory of a workload made of iterations: the resident peak during one iteration
/// minus the resident size just before it, for the iteration that added most (Linux:
/// ``Measure/resetPeak()`` before each, `VmHWM` after), so memory the allocator keeps from
/// one iteration to the next is not counted as the fold's. Elsewhere: the process's peak
/// (`ru_maxrss`) over all iterations, from before the first.
struct IterationPeaks {
    private(set) var before: Int
    private(set) var peak: Int
    private var measured = false
    private var start: Int?

    init() {
        before = Measure.peakRSS()
        peak = before
    }

    /// Call just before an iteration's timed part.
    mutating func begin() {
        start = Measure.resetPeak() ? Measure.resident()?.now : nil
    }

    /// Call just after it.
    mutating func end() {
        guard let start, let r = Measure.resident() else {
            peak = max(peak, Measure.peakRSS())
            return
        }
        if !measured || r.peak - start > peak - before {
            (before, peak, measured) = (start, r.peak, true)
        }
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
