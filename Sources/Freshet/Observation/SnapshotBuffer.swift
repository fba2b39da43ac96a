import Synchronization

/// What stands between the hub and one observer: the snapshots sent but not yet read.
///
/// It holds at most two: the **first** snapshot ever sent, until the observer has read it,
/// and the **newest** one sent after it. A consumer slower than the commits therefore reads
/// the first value (the stored state with the status it had), then the newest; only values
/// in between are dropped (coalesced), never the first, and never the newest. (A
/// `bufferingNewest(1)` stream drops the first value when a second arrives before the
/// consumer reads: the `stale` state was replaced by `refreshing`.)
///
/// One task reads at a time, as with `AsyncThrowingStream`; reading from two at once is a
/// programmer error. A cancelled read returns nil and ends the observation.
///
/// The reader's continuation is an `UnsafeContinuation`: it is resumed exactly once, by
/// whoever takes it out of `state` under the lock (a checked one allocates per read, which
/// with 1,000 observers is 1,000 allocations per commit).
final class SnapshotBuffer: Sendable {
    private struct State: Sendable {
        /// The first value sent, while it is unread.
        var first: Snapshot?
        /// The newest value sent after the first, while it is unread.
        var newest: Snapshot?
        var hasReceived = false
        /// How the sequence ends once the buffer is empty: nil (finished) or an error, thrown once.
        var end: (any Error)??
        /// Whether the end was already reported to the reader.
        var endReported = false
        var reader: UnsafeContinuation<Snapshot?, any Error>?
        var onTermination: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    /// `onTermination` runs once when the sequence ends: finished by the hub, or the
    /// observer stopped (cancelled its read, or dropped the observation).
    init(onTermination: @escaping @Sendable () -> Void) {
        state.withLock { $0.onTermination = onTermination }
    }

    /// Whether the sequence has ended (finished, or the observer is gone).
    var hasEnded: Bool {
        state.withLock { $0.end != nil }
    }

    /// Sends `snapshot`: to the waiting reader, or into the buffer.
    func yield(_ snapshot: Snapshot) {
        let reader = state.withLock { s -> UnsafeContinuation<Snapshot?, any Error>? in
            guard s.end == nil else { return nil }
            defer { s.hasReceived = true }
            if let reader = s.reader {
                s.reader = nil
                return reader
            }
            if s.hasReceived { s.newest = snapshot } else { s.first = snapshot }
            return nil
        }
        reader?.resume(returning: snapshot)
    }

    /// Ends the sequence after the buffered values; with `error`, the reader gets it once
    /// they are read.
    func finish(throwing error: (any Error)? = nil) {
        end(error)
    }

    /// The observer is gone: drops what is buffered and ends the sequence.
    func terminate() {
        end(nil, dropBuffered: true)
    }

    private func end(_ end: (any Error)?, dropBuffered: Bool = false) {
        let (reader, onTermination) = state.withLock { s -> (UnsafeContinuation<Snapshot?, any Error>?, (@Sendable () -> Void)?) in
            if s.end == nil { s.end = .some(end) }
            if dropBuffered {
                s.first = nil
                s.newest = nil
            }
            defer {
                s.reader = nil
                s.onTermination = nil
            }
            if s.reader != nil { s.endReported = true }
            return (s.reader, s.onTermination)
        }
        onTermination?()
        if let reader {
            if let end { reader.resume(throwing: end) } else { reader.resume(returning: nil) }
        }
    }

    /// The next value: the unread first one, then the newest; nil once the sequence has
    /// ended and the buffer is empty.
    /// - Throws: the error the hub finished with, once.
    func next() async throws -> Snapshot? {
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Snapshot?, any Error>) in
                let ready = state.withLock { s -> Result<Snapshot?, any Error>? in
                    if let first = s.first {
                        s.first = nil
                        return .success(first)
                    }
                    if let newest = s.newest {
                        s.newest = nil
                        return .success(newest)
                    }
                    if let end = s.end {
                        if s.endReported { return .success(nil) }
                        s.endReported = true
                        return end.map { .failure($0) } ?? .success(nil)
                    }
                    // Cancellation sets the flag before its handler runs: either the handler
                    // finds this reader waiting, or the flag is already set here.
                    if Task.isCancelled { return .success(nil) }
                    precondition(s.reader == nil, "a CollectionObservation is read by two tasks at once; give each task its own observe(_:)")
                    s.reader = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            terminate()
        }
    }
}

/// Ends its buffer's sequence when the last copy of a ``CollectionObservation`` and of its iterators
/// is gone, so the hub stops reading for an observer nobody holds.
final class ObservationLifetime: Sendable {
    let buffer: SnapshotBuffer

    init(_ buffer: SnapshotBuffer) {
        self.buffer = buffer
    }

    deinit {
        buffer.terminate()
    }
}
