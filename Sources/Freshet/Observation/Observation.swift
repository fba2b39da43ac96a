/// The snapshots of one observed collection, as an `AsyncSequence`.
///
/// The first snapshot is read from the store at once (no network; also offline and after a
/// relaunch). A new one follows every commit that touches the collection and every change of
/// its loading status, each once. A 304 or a refetch of identical rows emits the same rows
/// with a new LSN and status: the UI sees only a status change. A consumer slower
/// than the commits gets the newest snapshot, never an older one (the buffer holds one).
/// The sequence ends when the store closes, and throws a ``StoreError`` if the stored state
/// cannot be read.
public struct Observation: AsyncSequence, Sendable {
    public typealias Element = Snapshot
    let stream: AsyncThrowingStream<Snapshot, any Error>

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Snapshot, any Error>.AsyncIterator
        public mutating func next() async throws -> Snapshot? { try await base.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator()) }
}
