import Foundation

/// Folds chunks of decoded records on a thread of its own while the caller reads and decodes
/// the next ones: a two-stage pipeline over the two cores a log tool usually has, bounded to
/// ``depth`` chunks waiting, so memory stays at a few chunks however long the log.
///
/// The caller (``LogFolder``) submits chunks in log order and ends with ``finish()``, which
/// waits until every chunk is folded and returns the problems in log order: each chunk's
/// reading problems (``FoldChunk/problems``), then the records of it that did not fold. A
/// fold that throws stops the pipeline; the error comes out of the next ``submit(_:)`` or of
/// ``finish()``, and nothing after the failing chunk is folded. ``cancel()`` (the caller
/// failed) stops the worker without folding what is still queued.
///
/// Folded chunks are handed back and freed on the caller's thread at its next ``submit(_:)``:
/// freeing a chunk's records (their strings, rows and arrays) was a tenth of a `replay`, and
/// the folding thread is the one that bounds it (docs/performance.md, "Issue 8 speed round 3").
/// One of them comes back emptied for the caller to refill, so the chunks' buffers are
/// allocated once per run, not once per chunk ("Issue 8 speed round 4").
///
/// Before issue 8's speed round 3 one thread read, decoded and folded in turn.
final class FoldPipeline: @unchecked Sendable {
    // @unchecked: every stored property but `fold` is read and written only with `condition`
    // locked. `fold` (which holds the scratch tables, not Sendable) is called only on the
    // worker thread; the caller touches the tables again only after `finish()` or `cancel()`
    // returned, i.e. after the worker's last unlock of `condition`, which orders its writes
    // before the caller's reads.

    /// Chunks decoded but not yet folded, at most this many: while the worker folds one, the
    /// caller may decode the next.
    static let depth = 2

    private let condition = NSCondition()
    private let fold: (FoldChunk) throws -> [StoreProblem]
    private var queue: [FoldChunk] = []
    private var spent: [FoldChunk] = []
    private var problems: [StoreProblem] = []
    private var failure: (any Error)?
    /// Folded chunks emptied and kept for the caller (only its thread touches this): when no
    /// chunk was folded since the last ``submit(_:)``, one of these is handed back instead of
    /// the caller making a chunk whose buffers grow from nothing (about 45 of W5's 245 chunks
    /// were, each growing its prepared bytes eight times: docs/performance.md, "Issue 8 speed
    /// round 9 (reading side)"). At most the chunks ever in flight at once.
    private var emptied: [FoldChunk] = []
    /// The caller submits nothing more (finish), or wants the worker gone (cancel).
    private var closed = false
    private var cancelled = false
    private var workerDone = false

    /// Starts the worker thread; `fold` folds one chunk (on that thread) and returns the
    /// records that did not fold.
    init(fold: @escaping (FoldChunk) throws -> [StoreProblem]) {
        self.fold = fold
        let thread = Thread { [self] in work() }
        thread.name = "freshet.fold"
        // The fold runs on this thread as it would on the caller's: give it a main thread's
        // stack (Darwin's secondary threads default to 512 KiB).
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Queues `chunk` to be folded after the ones before it, waiting while ``depth`` chunks
    /// wait already. Empties, on this thread, the chunks folded since the last call
    /// (``FoldChunk/removeAll()``: their records freed, their buffers kept), and returns one
    /// of them, or of those emptied before, for the caller to fill next; nil when none was
    /// folded yet.
    /// - Throws: the error of a chunk that failed to fold (then `chunk` is not queued).
    @discardableResult
    func submit(_ chunk: consuming FoldChunk) throws -> FoldChunk? {
        var folded: [FoldChunk] = []
        condition.lock()
        precondition(!closed, "FoldPipeline.submit after finish or cancel")
        while queue.count >= Self.depth, failure == nil { condition.wait() }
        if let failure {
            condition.unlock()
            throw failure
        }
        queue.append(chunk)
        swap(&folded, &spent)
        condition.broadcast()
        condition.unlock()
        // Emptied here, outside the lock (their records freed on this thread).
        while var chunk = folded.popLast() {
            chunk.removeAll()
            emptied.append(chunk)
        }
        return emptied.popLast()
    }

    /// Waits until every submitted chunk is folded (or one failed) and the worker has ended;
    /// returns every chunk's problems in log order.
    /// - Throws: the error of the chunk that failed to fold.
    func finish() throws -> [StoreProblem] {
        condition.lock()
        closed = true
        condition.broadcast()
        while !workerDone { condition.wait() }
        let result: Result<[StoreProblem], any Error> = failure.map { .failure($0) } ?? .success(problems)
        spent.removeAll()
        condition.unlock()
        return try result.get()
    }

    /// Stops the worker after the chunk it is folding, dropping the queued ones, and waits for
    /// it to end. Safe after ``finish()`` (then it does nothing).
    func cancel() {
        condition.lock()
        closed = true
        cancelled = true
        queue.removeAll()
        condition.broadcast()
        while !workerDone { condition.wait() }
        spent.removeAll()
        condition.unlock()
    }

    private func work() {
        condition.lock()
        while true {
            while queue.isEmpty, !closed { condition.wait() }
            if queue.isEmpty || cancelled || failure != nil { break }
            let chunk = queue.removeFirst()
            condition.unlock()
            let result = Result { try fold(chunk) }
            condition.lock()
            switch result {
            case .success(let folded):
                problems += chunk.problems
                problems += folded
            case .failure(let error):
                failure = error
                queue.removeAll()
            }
            spent.append(consume chunk)
            condition.broadcast()
        }
        workerDone = true
        condition.broadcast()
        condition.unlock()
    }
}
