import Foundation

/// Runs `body` on a thread of its own instead of Swift's cooperative pool, and returns what it
/// returns. For tests that block a thread for long (waiting for a child process, reading its
/// pipe, minutes of CPU on a damaged-file corpus, verifying a big store): the pool has one
/// thread a core (2 on the 2-core CI machine), and every test suspended on a `TestClock` or a
/// transport waits for a free pool thread to resume. With both held by such work for tens of
/// seconds, unrelated async tests exceeded their time limits (342 issues on a busy machine).
///
/// `body` runs in the calling task under a task executor preference
/// (`withTaskExecutorPreference`), so the test's task-local context stays: an `#expect` or
/// `Issue.record` inside `body` is reported for the test that called, as it would be outside.
/// Child tasks `body` starts run on the same thread; `await`s inside it free that thread only.
public func offPool<T, Failure: Error>(_ body: () async throws(Failure) -> T) async throws(Failure) -> T {
    let executor = ThreadExecutor()
    defer { executor.finish() }
    return try await withTaskExecutorPreference(executor) { () async throws(Failure) -> T in
        // The preference moves the task at its next suspension: suspend once, so that a
        // `body` that never suspends runs on the executor's thread too.
        await Task.yield()
        return try await body()
    }
}

/// A task executor with one thread of its own, which runs its jobs in turn until `finish()`.
/// A job enqueued after the thread ended gets a new thread.
final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finishing = false
    private var running = true

    init() {
        let thread = Thread { [self] in run() }
        thread.name = "offPool"
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        defer { condition.unlock() }
        if running {
            jobs.append(job)
            condition.signal()
        } else {
            Thread.detachNewThread { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }

    /// Lets the thread end once it has run the jobs already enqueued.
    func finish() {
        condition.lock()
        finishing = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !finishing { condition.wait() }
            if jobs.isEmpty {
                running = false
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
