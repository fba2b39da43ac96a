import Foundation
import FreshetHTTP

/// Which pages one refresh or ``Store/loadMore(_:)`` fetches, decided from the collection's
/// stored ``SyncMark`` once any older request of the collection has folded.
///
/// - A resource that walks every page (``Resource/PageLoading/all``), and any unpaged one:
///   from the first URL to the page without a next one.
/// - An infinite list (``Resource/PageLoading/onDemand``): nothing loaded yet, or
///   ``RefreshMode/firstPage`` → the first page only (the latter drops the later pages).
///   Otherwise the loaded pages in order, from page 0 or, when an earlier revalidation
///   stopped at page *k* (``SyncMark/resumePage``), from page *k*'s stored URL, and no further.
/// - `loadMore`: the page the last loaded page names as next; the first page when none is
///   loaded; nothing (nil) when the last loaded page names none.
struct PageWalk: Equatable {
    /// The index (0-based) of the first page to fetch.
    var first: Int
    /// Its URL.
    var url: URL
    /// The index of the last page to fetch; nil: follow next pages to the end.
    var last: Int?
    /// The last page fetched is folded as the collection's last page even when it names a
    /// next one, dropping the rows of any page after it (``RefreshMode/firstPage``).
    var dropsLaterPages = false
    /// The stored (redacted) URLs of the held pages before ``first``, in their comparable
    /// form, with each page's index: a next page naming one of them is a loop.
    var earlier: [ComparableURL: Int] = [:]

    static func refreshing(_ resource: Resource, start: URL, mode: RefreshMode, stored: SyncMark?, redaction: URLRedaction) -> PageWalk {
        guard resource.loadsPagesOnDemand else { return PageWalk(first: 0, url: start, last: nil) }
        let held = stored?.pages ?? []
        if mode == .firstPage || held.isEmpty {
            return PageWalk(first: 0, url: start, last: 0, dropsLaterPages: mode == .firstPage)
        }
        if let k = stored?.resumePage, k > 0, k < held.count, let url = usable(held[k].url, redaction) {
            return PageWalk(first: k, url: url, last: held.count - 1, earlier: comparable(held[..<k]))
        }
        return PageWalk(first: 0, url: start, last: held.count - 1)
    }

    static func loadingMore(_ resource: Resource, start: URL, stored: SyncMark?, redaction: URLRedaction) -> PageWalk? {
        let held = stored?.pages ?? []
        guard let last = held.last else { return PageWalk(first: 0, url: start, last: 0) }
        guard let next = last.next else { return nil }
        guard let url = usable(next, redaction) else {
            // The stored next URL was redacted (it held a secret parameter): walk from the
            // first page again to learn the real one. Pages with a redacted next carry no
            // validators (see `Store.validators`), so each is fetched whole.
            return PageWalk(first: 0, url: start, last: held.count)
        }
        return PageWalk(first: held.count, url: url, last: held.count, earlier: comparable(held[...]))
    }

    /// Each page's stored URL, compared as ``ComparableURL``, with its index; the first of
    /// two pages stored with one URL keeps it.
    private static func comparable(_ pages: ArraySlice<SyncMark.PageMark>) -> [ComparableURL: Int] {
        Dictionary(pages.enumerated().map { (ComparableURL($0.element.url), $0.offset) }, uniquingKeysWith: { first, _ in first })
    }

    /// A stored URL that can be sent: not redacted, and absolute.
    private static func usable(_ text: String, _ redaction: URLRedaction) -> URL? {
        guard !text.isEmpty, !redaction.isRedacted(text), let url = URL(string: text), url.host != nil else { return nil }
        return url
    }
}
