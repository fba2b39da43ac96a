import Foundation

extension Duration {
    /// The duration in seconds, as Foundation's `TimeInterval`.
    package var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }

    /// Whole seconds when exact (`"30 s"`), otherwise rounded milliseconds (`"250 ms"`):
    /// the form used in error messages.
    var shortDescription: String {
        let milliseconds = (timeInterval * 1000).rounded()
        guard milliseconds.isFinite, abs(milliseconds) < 1e15 else { return "\(timeInterval) s" }
        let whole = Int(milliseconds)
        return whole % 1000 == 0 ? "\(whole / 1000) s" : "\(whole) ms"
    }
}
