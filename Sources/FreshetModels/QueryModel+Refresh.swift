import Foundation
import Freshet

extension QueryModel {
    /// Fetches the collection from the network now and returns when the response is
    /// committed (the model shows it with the snapshot that follows, delivered
    /// asynchronously) — SwiftUI's `.refreshable` and
    /// TanStack's `refetch()`. The outcome also shows in ``state`` (`fetch`, `error`), so the
    /// result may be ignored.
    ///
    /// The request runs in a task of its own: cancelling the caller (a view that goes away
    /// during pull to refresh) stops the wait, not the refresh, and the response is committed
    /// whether or not this model still exists. It shares the request in flight for the same
    /// resource and mode, if any (the store's in-flight deduplication).
    ///
    /// - Parameter mode: ``Freshet/RefreshMode/revalidate`` (conditional requests; a 304 keeps
    ///   the rows) by default, ``Freshet/RefreshMode/reload`` to ask for full bodies.
    /// - Returns: the ``Freshet/RefreshSummary``, or the ``Freshet/FetchError`` that
    ///   ``Freshet/Store/refresh(_:mode:)`` threw (recorded in the log as `fetchFailed` unless
    ///   nothing was sent). A cancelled caller gets the refresh's result once it ends.
    @discardableResult
    public func refresh(mode: RefreshMode = .revalidate) async -> Result<RefreshSummary, FetchError> {
        let store = self.store
        let resource = definition.resource
        return await outliving { () async throws(FetchError) in try await store.refresh(resource, mode: mode) }
    }
}

/// Runs `operation` in a task of its own and waits for its result: cancelling the caller (a
/// view that goes away) stops neither the request nor its commit, and the caller still gets
/// the result once it ends. Holds what `operation` captures (the store), never the model.
/// Shared by the models' `refresh()` and ``InfiniteQueryModel/loadMore()``.
func outliving<T: Sendable>(_ operation: @escaping @Sendable () async throws(FetchError) -> T) async -> Result<T, FetchError> {
    await detachedFetch(operation).value
}

/// The task ``outliving(_:)`` waits for, for callers that share it (concurrent `loadMore()`s).
func detachedFetch<T: Sendable>(_ operation: @escaping @Sendable () async throws(FetchError) -> T) -> Task<Result<T, FetchError>, Never> {
    Task.detached { () async -> Result<T, FetchError> in
        do throws(FetchError) {
            return .success(try await operation())
        } catch {
            return .failure(error)
        }
    }
}
