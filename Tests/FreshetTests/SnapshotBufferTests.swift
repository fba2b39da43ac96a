import Foundation
@testable import Freshet
import Testing

/// The buffer between the hub and one observer: the first value is kept until read, later
/// ones are coalesced to the newest.
@Suite("An observer's snapshot buffer")
struct SnapshotBufferTests {
    static func snapshot(_ lsn: UInt64, _ status: Snapshot.Status = .fresh) -> Snapshot {
        Snapshot(collection: "items", rows: [], syncMark: nil, status: status, lsn: LSN(lsn))
    }

    static func read(_ buffer: SnapshotBuffer, _ count: Int) async throws -> [LSN?] {
        var values: [LSN?] = []
        for _ in 0..<count { values.append(try await buffer.next()?.lsn) }
        return values
    }

    @Test("three values sent before any read: the first, then the newest")
    func firstThenNewest() async throws {
        let buffer = SnapshotBuffer {}
        for lsn in UInt64(1)...3 { buffer.yield(Self.snapshot(lsn)) }
        buffer.finish()
        #expect(try await Self.read(buffer, 3) == [1, 3, nil])
    }

    @Test("the first value is never replaced, whatever its status")
    func firstKept() async throws {
        let buffer = SnapshotBuffer {}
        buffer.yield(Self.snapshot(1, .stale))
        buffer.yield(Self.snapshot(1, .refreshing))
        #expect(try await buffer.next()?.status == .stale)
        #expect(try await buffer.next()?.status == .refreshing)
    }

    @Test("after the first is read, values sent while the reader is away coalesce to the newest")
    func coalescesAfterFirst() async throws {
        let buffer = SnapshotBuffer {}
        buffer.yield(Self.snapshot(1))
        #expect(try await buffer.next()?.lsn == 1)
        for lsn in UInt64(2)...50 { buffer.yield(Self.snapshot(lsn)) }
        #expect(try await buffer.next()?.lsn == 50)
        buffer.yield(Self.snapshot(51))
        #expect(try await buffer.next()?.lsn == 51)
    }

    @Test("a read by an already-cancelled task returns nil and ends the observation at once (onTermination runs, later values are dropped)")
    func cancelledBeforeReading() async throws {
        let terminated = Counter()
        let buffer = SnapshotBuffer { terminated.add() }
        let reader = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await buffer.next()?.lsn
        }
        #expect(try await reader.value == nil)
        #expect(terminated.count == 1)
        #expect(buffer.hasEnded)
        buffer.yield(Self.snapshot(1))
        #expect(try await buffer.next() == nil)
    }

    @Test("a reader waiting when a value is sent gets it")
    func waitingReader() async throws {
        let buffer = SnapshotBuffer {}
        let reader = Task { try await buffer.next()?.lsn }
        // The value may reach the reader while it waits or sit in the buffer: either way it is read.
        buffer.yield(Self.snapshot(7))
        #expect(try await reader.value == 7)
    }

    @Test("finishing with an error: the buffered values, then the error once, then the end")
    func finishThrowing() async throws {
        struct Unreadable: Error {}
        let ended = CallCounter()
        let buffer = SnapshotBuffer { ended.increment() }
        buffer.yield(Self.snapshot(1))
        buffer.yield(Self.snapshot(2))
        buffer.finish(throwing: Unreadable())
        buffer.yield(Self.snapshot(3))
        #expect(try await Self.read(buffer, 2) == [1, 2])
        await #expect(throws: Unreadable.self) { try await buffer.next() }
        #expect(try await buffer.next() == nil)
        #expect(ended.count == 1)
    }

    @Test("cancelling the reading task ends the sequence and tells the hub once")
    func cancelledRead() async throws {
        let ended = CallCounter()
        let buffer = SnapshotBuffer { ended.increment() }
        buffer.yield(Self.snapshot(1))
        #expect(try await buffer.next()?.lsn == 1)
        let reader = Task { try await buffer.next() }
        reader.cancel()
        #expect(try await reader.value == nil)
        #expect(try await buffer.next() == nil)
        #expect(buffer.hasEnded)
        #expect(ended.count == 1)
    }

    @Test("dropping every copy of an observation ends it, and the hub stops delivering to it")
    func droppedObservation() async throws {
        try await withTemporaryStore { store in
            do {
                var iterator = store.observe("items").makeAsyncIterator()
                _ = try await iterator.next()
                #expect(store.hub.observedCollections == ["items"])
            }
            #expect(store.hub.observedCollections.isEmpty)
        }
    }
}
