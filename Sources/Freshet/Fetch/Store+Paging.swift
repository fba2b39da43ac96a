import Foundation

extension Store {
    /// Appends the next page of a paged resource (an infinite list, see
    /// ``Resource/infinite(_:path:query:rowsAt:id:paging:freshness:)``): one request for the
    /// URL the last loaded page named as next, folded as a `fetched` event with placement
    /// `page(index: loaded pages, …)`. With no page loaded yet it fetches the first page.
    ///
    /// ```swift
    /// let pokemon = Resource.infinite("pokemon", path: "/api/v2/pokemon/", query: ["limit": "20"])
    /// try await store.refresh(pokemon)                       // rows 1–20
    /// while try store.snapshot("pokemon").query.hasMore {
    ///     try await store.loadMore(pokemon)                  // + 20 rows each time
    /// }
    /// ```
    ///
    /// Concurrent calls for the same resource share one request (and its outcome). A call
    /// asked for while a refresh of the collection is running waits for it, so the page it
    /// appends follows the revalidated pages. A row whose ID an earlier page holds moves to
    /// the new page (the position the server gave last wins; docs/queries.md, "Paging").
    ///
    /// - Returns: ``LoadMoreResult/endReached`` without any request when the server said
    ///   there is no next page (``QueryState/hasMore`` is false), or when a resource of one
    ///   page (paging `.none`, or a document) has been fetched; otherwise what was fetched.
    /// - Throws: what ``Store/refresh(_:)`` throws, without appending the page: `crossOrigin`
    ///   when the next URL is on another origin (nothing is sent to it), `pagingLoop` when it
    ///   names a page already loaded (however it is spelled: ``ComparableURL``),
    ///   `tooManyPages` when the list already holds ``Configuration/maxPages`` pages, `duplicateRowIDs` and `emptyPage` for a page that breaks
    ///   paging, `malformedBody` for a cursor of the wrong type. The loaded pages are kept.
    @discardableResult
    public func loadMore(_ resource: Resource) async throws(FetchError) -> LoadMoreResult {
        let (url, key) = try prepareRefresh(resource)
        do {
            if let mark = try syncMark(resource.collection) {
                // Known at once: the last loaded page names no next one.
                if let last = mark.pages.last, last.next == nil { return .endReached }
                // A resource of one page (paging `.none`, or a document) has no next page once
                // it has been fetched: loading more must not fetch it again as a refresh.
                if resource.paging == .none || resource.rows == .document, mark.fetchedAt != nil { return .endReached }
            }
        } catch {
            throw FetchError(.storage, error.message, url: logged(url))
        }
        guard let result = await shareRefresh(resource, url: url, key: key + " more", mode: .revalidate, loadingMore: true, unlessEndedSince: nil) else {
            preconditionFailure("a loadMore without a recheck point always joins or starts a request")
        }
        let summary = try result.get()
        return summary.pages == 0 ? .endReached : .loaded(summary)
    }
}
