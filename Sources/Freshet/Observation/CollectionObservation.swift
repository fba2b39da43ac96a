/// The snapshots of one observed collection, as an `AsyncSequence`.
///
/// The first snapshot is read from the store at once (no network; also offline and after a
/// relaunch): the stored rows with the status they had (`stale`, `fresh`, `empty`, or
/// `refreshing` when a refresh was already in flight). It is always the first value the
/// consumer reads: nothing sent after it can replace it. A new snapshot follows a commit or a
/// fetch start/end only when something a view shows changed — rows, pending mutations,
/// ``Snapshot/status`` or ``Snapshot/query`` (docs/queries.md, "Emissions"): 304s and
/// refetches of identical rows emit only the fetch's start and end. A consumer slower than the commits gets, after the first value, the newest
/// snapshot, never an older one: values in between are coalesced (docs/architecture.md).
/// The sequence ends when the store closes, and throws a ``StoreError`` if the stored state
/// cannot be read. Read each observation from one task at a time; cancelling the reading task
/// ends it.
///
/// Named `CollectionObservation`, not `Observation`: a public type named like the Swift
/// `Observation` module shadows it in every file that imports Freshet, and the `@Observable`
/// macro's expansion (`Observation.ObservationRegistrar`) then fails to compile there.
public struct CollectionObservation: AsyncSequence, Sendable {
    public typealias Element = Snapshot
    let lifetime: ObservationLifetime

    public struct AsyncIterator: AsyncIteratorProtocol {
        let lifetime: ObservationLifetime
        public mutating func next() async throws -> Snapshot? { try await lifetime.buffer.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(lifetime: lifetime) }
}
