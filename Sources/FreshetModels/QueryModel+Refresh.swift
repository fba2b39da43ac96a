import Foundation
import Freshet
import Synchronization

extension QueryModel {
    /// Fetches the collection from the network now and returns when the response is
    /// committed (the model shows it with the snapshot that follows, delivered
    /// asynchronously) — SwiftUI's `.refreshable` and
    /// TanStack's `refetch()`. The outcome also shows in ``state`` (`fetch`, `error`), so the
    /// result may be ignored.
    ///
    /// The request runs in a task of its own: cancelling the caller (a view that goes away
    /// during pull to refresh) stops the wait at once, not the refresh, and the response is
    /// committed whether or not this model still exists. (While this method runs it holds the
    /// model; the model can be freed once the caller is cancelled and the call has returned.) It shares the request in flight for the same
    /// resource and mode, if any (the store's in-flight deduplication).
    ///
    /// - Parameter mode: ``Freshet/RefreshMode/revalidate`` (conditional requests; a 304 keeps
    ///   the rows) by default, ``Freshet/RefreshMode/reload`` to ask for full bodies.
    /// - Returns: the ``Freshet/RefreshSummary``, or the ``Freshet/FetchError`` that
    ///   ``Freshet/Store/refresh(_:mode:)`` threw (recorded in the log as `fetchFailed` unless
    ///   nothing was sent). A cancelled caller gets `.failure` with code `cancelled` at once,
    ///   without waiting for the response (which still shows in ``state`` once folded).
    @discardableResult
    public func refresh(mode: RefreshMode = .revalidate) async -> Result<RefreshSummary, FetchError> {
        let store = self.store
        let resource = definition.resource
        return await outliving("the refresh of \(resource.collection)", url: resource.path) { () async throws(FetchError) in try await store.refresh(resource, mode: mode) }
    }
}

/// Runs `operation` in a task of its own and waits for its result: cancelling the caller (a
/// view that goes away) stops the wait at once (see ``waitCancellably(_:what:url:)``), never the
/// request nor its commit. Holds what `operation` captures (the store), never the model.
/// Used by the models' `refresh()`.
func outliving<T: Sendable>(_ what: String, url: String, _ operation: @escaping @Sendable () async throws(FetchError) -> T) async -> Result<T, FetchError> {
    await waitCancellably(detachedFetch(operation), what: what, url: url)
}

/// The task ``outliving(_:url:_:)`` waits for, for callers that share it (concurrent `loadMore()`s).
func detachedFetch<T: Sendable>(_ operation: @escaping @Sendable () async throws(FetchError) -> T) -> Task<Result<T, FetchError>, Never> {
    Task.detached { () async -> Result<T, FetchError> in
        do throws(FetchError) {
            return .success(try await operation())
        } catch {
            return .failure(error)
        }
    }
}

/// `task`'s result, or — as soon as the calling task is cancelled (also when it already is)
/// — a `cancelled` ``Freshet/FetchError`` naming `what` (`url`: the resource's path, as the
/// error's URL); `task` itself goes on.
/// (`await task.value` alone would ignore the caller's cancellation.)
func waitCancellably<T: Sendable>(_ task: Task<Result<T, FetchError>, Never>, what: String, url: String) async -> Result<T, FetchError> {
    let slot = ResultSlot<T>()
    return await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
            slot.set(continuation)
            Task { slot.resume(with: await task.value) }
        }
    } onCancel: {
        slot.resume(with: .failure(FetchError(.cancelled, "the caller stopped waiting for \(what); the request goes on and is committed", url: url)))
    }
}

/// A continuation resumed once, by the result or the cancellation, whichever comes first
/// (either may come before the continuation is set).
private final class ResultSlot<T: Sendable>: Sendable {
    private struct State: Sendable {
        var continuation: CheckedContinuation<Result<T, FetchError>, Never>?
        var early: Result<T, FetchError>?
        var done = false
    }
    private let state = Mutex(State())

    func set(_ continuation: CheckedContinuation<Result<T, FetchError>, Never>) {
        let early = state.withLock { s -> Result<T, FetchError>? in
            guard let early = s.early else {
                s.continuation = continuation
                return nil
            }
            s.early = nil
            return early
        }
        if let early { continuation.resume(returning: early) }
    }

    func resume(with result: Result<T, FetchError>) {
        let continuation = state.withLock { s -> CheckedContinuation<Result<T, FetchError>, Never>? in
            guard !s.done else { return nil }
            s.done = true
            guard let c = s.continuation else {
                s.early = result
                return nil
            }
            s.continuation = nil
            return c
        }
        continuation?.resume(returning: result)
    }
}
