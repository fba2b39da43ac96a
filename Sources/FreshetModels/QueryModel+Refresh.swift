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
        let refresh = Task.detached { () async -> Result<RefreshSummary, FetchError> in
            do throws(FetchError) {
                return .success(try await store.refresh(resource, mode: mode))
            } catch {
                return .failure(error)
            }
        }
        return await refresh.value
    }
}
