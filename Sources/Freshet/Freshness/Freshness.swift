import Foundation
import FreshetHTTP

/// Whether a collection is stale under its policy, and why: the verdict `refreshIfNeeded`,
/// snapshot statuses and `freshet why` share.
public struct FreshnessVerdict: Sendable, Hashable {
    /// Whether `refreshIfNeeded` would go to the network.
    public var isStale: Bool
    /// One line saying why, such as `fresh for 42 s more (max-age=60, age 18 s)`.
    public var reason: String
    /// When the rows stop being fresh, when that is known.
    public var freshUntil: Date?
}

/// RFC 9111 §4.2 freshness, computed from a SyncMark (pure: the time is passed in).
public enum Freshness {
    /// The longest heuristic freshness lifetime (RFC 9111 §4.2.2 leaves the bound to the cache).
    static let heuristicCap: Double = 86_400

    /// Judges `mark` under `policy` at time `now`.
    ///
    /// Time-based policies (``FreshnessPolicy/maxAge(_:)``, ``FreshnessPolicy/http``) judge a
    /// `now` earlier than the mark's `validatedAt` — the device clock moved back — stale, with a
    /// reason that says so; a clock moved forward only makes rows older (stale sooner).
    public static func evaluate(_ mark: SyncMark?, policy: FreshnessPolicy, now: Date) -> FreshnessVerdict {
        guard let mark, let validatedAt = mark.validatedAt else {
            return FreshnessVerdict(isStale: true, reason: "never fetched", freshUntil: nil)
        }
        if let invalidatedAt = mark.invalidatedAt {
            return FreshnessVerdict(isStale: true, reason: "invalidated at \(LogRecord.iso8601(invalidatedAt)) and not fetched since", freshUntil: nil)
        }
        // The device clock reads earlier than the last validation: it was moved back (or was
        // ahead when the rows were fetched). Their age cannot be known, so they are stale:
        // never fresh for longer than their lifetime, and not stale forever either, since the
        // next 200 or 304 stamps them with the clock as it reads then (docs/freshness.md,
        // "Clock changes"). The clock-free policies below do not look at the time.
        if now < validatedAt, policy != .always, policy != .manual {
            return FreshnessVerdict(
                isStale: true,
                reason: "the clock reads \(LogRecord.iso8601(now)), before the last validation at \(LogRecord.iso8601(validatedAt)): it was moved back, so the age is unknown",
                freshUntil: nil)
        }
        switch policy {
        case .always:
            return FreshnessVerdict(isStale: true, reason: "policy .always: every refresh goes to the server", freshUntil: nil)
        case .manual:
            return FreshnessVerdict(isStale: false, reason: "policy .manual: fresh until invalidated", freshUntil: nil)
        case .maxAge(let maxAge):
            let age = now.timeIntervalSince(validatedAt)
            let until = validatedAt.addingTimeInterval(maxAge.timeInterval)
            return verdict(age: age, lifetime: maxAge.timeInterval, until: until, detail: "maxAge \(format(maxAge.timeInterval))")
        case .http:
            let cc = CacheControl(parsing: mark.cacheControl ?? "")
            if cc.noStore {
                return FreshnessVerdict(isStale: true, reason: "Cache-Control no-store: nothing is kept, every refresh goes to the server", freshUntil: nil)
            }
            if cc.noCache {
                return FreshnessVerdict(isStale: true, reason: "Cache-Control no-cache: revalidate every time (RFC 9111 §5.2.2.4)", freshUntil: nil)
            }
            let (lifetime, source) = lifetime(mark, cacheControl: cc, responseTime: validatedAt)
            let initialAge = correctedInitialAge(mark, responseTime: validatedAt)
            let age = initialAge + max(0, now.timeIntervalSince(validatedAt))
            let until = validatedAt.addingTimeInterval(lifetime - initialAge)
            return verdict(age: age, lifetime: lifetime, until: until, detail: source)
        }
    }

    private static func verdict(age: Double, lifetime: Double, until: Date, detail: String) -> FreshnessVerdict {
        // RFC 9111 §4.2: fresh when freshness_lifetime > current_age.
        if lifetime > age {
            return FreshnessVerdict(isStale: false, reason: "fresh for \(format(lifetime - age)) more (\(detail), age \(format(age)))", freshUntil: until)
        }
        return FreshnessVerdict(isStale: true, reason: "stale for \(format(age - lifetime)) (\(detail), age \(format(age)))", freshUntil: until)
    }

    /// RFC 9111 §4.2.1: `max-age`, else `Expires` minus `Date`, else a heuristic of 10% of
    /// the time since `Last-Modified` (§4.2.2, capped at one day), else 0. `s-maxage` is for
    /// shared caches and ignored: the store is a private cache.
    static func lifetime(_ mark: SyncMark, cacheControl cc: CacheControl, responseTime: Date) -> (Double, String) {
        if let maxAge = cc.maxAge { return (Double(maxAge), "max-age=\(maxAge)") }
        let date = mark.responseDate.flatMap { HTTPDate.parse($0, now: responseTime) } ?? responseTime
        if let expires = mark.expires {
            // §5.3: an invalid Expires (such as "0") means already expired.
            guard let expiry = HTTPDate.parse(expires, now: responseTime) else { return (0, "invalid Expires \(expires.debugDescription)") }
            return (max(0, expiry.timeIntervalSince(date)), "Expires \(expires)")
        }
        if let lm = mark.lastModified, let modified = HTTPDate.parse(lm, now: responseTime), modified < date {
            let heuristic = min(heuristicCap, date.timeIntervalSince(modified) / 10)
            return (heuristic, "heuristic: 10% of the time since Last-Modified")
        }
        return (0, "no max-age, Expires or Last-Modified")
    }

    /// RFC 9111 §4.2.3 `corrected_initial_age`: the larger of the apparent age (response time
    /// minus `Date`) and `Age` plus the response delay.
    static func correctedInitialAge(_ mark: SyncMark, responseTime: Date) -> Double {
        let date = mark.responseDate.flatMap { HTTPDate.parse($0, now: responseTime) }
        let apparentAge = date.map { max(0, responseTime.timeIntervalSince($0)) } ?? 0
        // §5.1: Age is delta-seconds (digits only); an invalid one is ignored, a huge one capped (§1.2.2).
        let ageText = mark.age?.trimmingCharacters(in: .whitespaces) ?? ""
        let ageValue = !ageText.isEmpty && ageText.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 })
            ? Double(ageText.count > 10 ? 2_147_483_648 : min(Int(ageText) ?? 0, 2_147_483_648)) : 0
        let responseDelay = Double(mark.responseDelayMicros) / 1_000_000
        return max(apparentAge, ageValue + responseDelay)
    }

    static func format(_ seconds: Double) -> String {
        if seconds >= 86_400 * 2 { return String(format: "%.1f d", seconds / 86_400) }
        if seconds >= 3600 * 2 { return String(format: "%.1f h", seconds / 3600) }
        if seconds >= 120 { return String(format: "%.1f min", seconds / 60) }
        return String(format: "%.0f s", seconds.rounded())
    }
}
