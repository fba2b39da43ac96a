extension TestClock {
    /// A point in a ``TestClock``'s time: how far the clock had advanced from its start.
    ///
    /// ```swift
    /// let clock = TestClock()
    /// let deadline = clock.now.advanced(by: .seconds(2))
    /// deadline.offset                  // 2 seconds
    /// clock.now.duration(to: deadline) // 2 seconds
    /// ```
    ///
    /// Instants of different clocks can be compared, but only instants of the same clock
    /// mean anything together. Ordering and equality follow ``offset``.
    public struct Instant: InstantProtocol, Sendable, Hashable, CustomStringConvertible {
        /// The time elapsed since the clock's start (its `start` date), as a `Duration`
        /// (seconds and attoseconds). Zero at the start; negative only if built that way.
        public var offset: Duration

        /// The instant `offset` after the clock's start.
        public init(offset: Duration) {
            self.offset = offset
        }

        /// The clock's start: an offset of zero.
        public static let zero = Instant(offset: .zero)

        /// The instant `duration` later (earlier when `duration` is negative).
        public func advanced(by duration: Duration) -> Instant {
            Instant(offset: offset + duration)
        }

        /// The time from this instant to `other`: negative when `other` is earlier.
        public func duration(to other: Instant) -> Duration {
            other.offset - offset
        }

        /// Whether `lhs` comes before `rhs`.
        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.offset < rhs.offset
        }

        /// The instant `rhs` after `lhs`.
        public static func + (lhs: Instant, rhs: Duration) -> Instant {
            lhs.advanced(by: rhs)
        }

        /// Moves `lhs` later by `rhs`.
        public static func += (lhs: inout Instant, rhs: Duration) {
            lhs = lhs.advanced(by: rhs)
        }

        /// The instant `rhs` before `lhs`.
        public static func - (lhs: Instant, rhs: Duration) -> Instant {
            lhs.advanced(by: .zero - rhs)
        }

        /// Moves `lhs` earlier by `rhs`.
        public static func -= (lhs: inout Instant, rhs: Duration) {
            lhs = lhs - rhs
        }

        /// The time from `rhs` to `lhs`: positive when `lhs` is later.
        public static func - (lhs: Instant, rhs: Instant) -> Duration {
            rhs.duration(to: lhs)
        }

        /// `"+1.5 seconds"`: the offset from the clock's start.
        public var description: String { "+\(offset)" }
    }
}
