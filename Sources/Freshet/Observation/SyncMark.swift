import Foundation

/// What a collection knows about its last sync with the server: when, with which validators
/// and freshness headers, the next page's cursor, and the outcome of the last attempt.
///
/// Times are absolute (`Date`, from the store's clock when the event was appended), so
/// freshness is right after a relaunch days later. A SyncMark changes only by folding events.
public struct SyncMark: Sendable, Hashable {
    /// When the last successful fetch (a 2xx with a body) was appended.
    public var fetchedAt: Date?
    /// The LSN of that fetch.
    public var fetchedLSN: LSN?
    /// When the server last confirmed the rows: a 2xx or a 304 Not Modified.
    public var validatedAt: Date?
    /// The last event that touched this collection.
    public var lastLSN: LSN = .zero
    /// The `ETag` of the last 2xx (kept when a 304 carries none), verbatim.
    public var etag: String?
    /// The `Last-Modified` of the last 2xx, verbatim.
    public var lastModified: String?
    /// The freshness headers of the last 2xx or 304, verbatim (RFC 9111 §4.2).
    public var cacheControl: String?
    /// The `Date` header of the last 2xx or 304, verbatim.
    public var responseDate: String?
    /// The `Age` header of the last 2xx or 304, verbatim.
    public var age: String?
    /// The `Expires` header of the last 2xx or 304, verbatim.
    public var expires: String?
    /// The cursor of the page after the last page the collection holds (an absolute URL: a
    /// PokeAPI `next`, a `Link rel="next"`, or the first URL with an opaque cursor parameter);
    /// nil when the server said the last page held is the last page. Equal to
    /// `pages.last?.next` for a paged collection.
    public var nextCursor: String?
    /// How many pages the collection holds (0 when it is not paged).
    public var pageCount: Int = 0
    /// When the last fetch attempt (successful or not) was appended.
    public var lastAttemptAt: Date?
    /// The last failure since the last success, or nil.
    public var lastError: FailureInfo?
    /// Failed attempts since the last success.
    public var consecutiveFailures: Int = 0
    /// When the app last invalidated the collection, if no fetch came after it.
    public var invalidatedAt: Date?
    /// The LSN of that invalidation.
    public var invalidatedLSN: LSN?
    /// The last event that changed the rows (a refetch of identical rows does not).
    public var rowsLSN: LSN = .zero
    /// How long the last 2xx or 304 exchange took, in microseconds: RFC 9111 §4.2.3's
    /// `response_time - request_time`, used to correct the response's age.
    public var responseDelayMicros: Int64 = 0
    /// The last response said `Cache-Control: no-store`: the rows live in memory only.
    public var noStore: Bool = false
    /// One entry per page of a paged collection, in page order: each page's URL, validators
    /// and the next page's cursor, for conditional requests page by page.
    public var pages: [PageMark] = []
    /// The page (0-based) an unfinished revalidation of the loaded pages stopped before: the
    /// pages before it were confirmed (2xx or 304) by that revalidation, this one was not (its
    /// fetch failed, or the refresh was cancelled). The next refresh of an infinite list
    /// resumes there instead of at page one; nil when no revalidation is unfinished.
    public var resumePage: Int?
    /// For each push source that sent this collection a `changed` event with an ID, the last
    /// such event folded (sorted by source name): the duplicate check of the next one
    /// (``PushOrigin/repeats(_:)``) and the point a source resumes from
    /// (``Store/pushCursor(source:)``).
    public var pushCursors: [PushCursor] = []

    public init() {}

    /// The cursor of push source `source`, or nil when it never sent this collection an event.
    public func pushCursor(source: String) -> PushCursor? {
        pushCursors.first { $0.source == source }
    }

    /// Records `cursor`, replacing the source's previous one; keeps the list sorted by source.
    mutating func setPushCursor(_ cursor: PushCursor) {
        pushCursors.removeAll { $0.source == cursor.source }
        let index = pushCursors.firstIndex { $0.source > cursor.source } ?? pushCursors.endIndex
        pushCursors.insert(cursor, at: index)
    }

    /// What a paged collection knows about one page.
    public struct PageMark: Sendable, Hashable {
        /// The page's absolute URL.
        public var url: String
        /// The page's `ETag`, verbatim.
        public var etag: String?
        /// The page's `Last-Modified`, verbatim.
        public var lastModified: String?
        /// The next page's cursor; nil on the last page.
        public var next: String?

        public init(url: String, etag: String? = nil, lastModified: String? = nil, next: String? = nil) {
            self.url = url
            self.etag = etag
            self.lastModified = lastModified
            self.next = next
        }
    }

    /// A failed attempt, as recorded by a `fetchFailed` event.
    public struct FailureInfo: Sendable, Hashable {
        /// The raw value of a ``FetchError/Code``, such as `httpStatus` or `cannotConnect`.
        public var reason: String
        /// The HTTP status when the server answered.
        public var status: Int?
        /// One line for a person.
        public var message: String
        /// The LSN of the `fetchFailed` event.
        public var lsn: LSN
    }
}

extension SyncMark {
    func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 96)
        w.field(1, time: fetchedAt)
        if let fetchedLSN { w.field(2, uint: fetchedLSN.rawValue) }
        w.field(3, time: validatedAt)
        w.field(4, uint: lastLSN.rawValue)
        w.field(5, string: etag)
        w.field(6, string: lastModified)
        w.field(7, string: cacheControl)
        w.field(8, string: responseDate)
        w.field(9, string: age)
        w.field(10, string: expires)
        w.field(11, string: nextCursor)
        w.field(12, uint: UInt64(clamping: pageCount))
        w.field(13, time: lastAttemptAt)
        if let e = lastError {
            w.field(14) { m in
                m.field(1, string: e.reason)
                if let s = e.status { m.field(2, uint: UInt64(clamping: s)) }
                m.field(3, string: e.message)
                m.field(4, uint: e.lsn.rawValue)
            }
        }
        w.field(15, uint: UInt64(clamping: consecutiveFailures))
        w.field(16, time: invalidatedAt)
        if let invalidatedLSN { w.field(17, uint: invalidatedLSN.rawValue) }
        w.field(18, uint: rowsLSN.rawValue)
        w.field(19, int: responseDelayMicros)
        if noStore { w.field(20, bool: true) }
        if let resumePage { w.field(22, uint: UInt64(clamping: resumePage)) }
        for page in pages {
            w.field(21) { m in
                m.field(1, string: page.url)
                m.field(2, string: page.etag)
                m.field(3, string: page.lastModified)
                m.field(4, string: page.next)
            }
        }
        for cursor in pushCursors {
            w.field(25) { m in
                m.field(1, string: cursor.source)
                m.field(2, string: cursor.eventID)
                m.field(3, uint: cursor.lsn.rawValue)
            }
        }
        return w.bytes
    }

    static func decode(_ bytes: [UInt8]) throws -> SyncMark {
        try bytes.withUnsafeBytes { try decode(ByteReader($0)) }
    }

    /// ``decode(_:)`` of `collection`'s `marks` entry, a format error reported as
    /// ``StoreError/Code/corruptRecord`` naming the collection.
    static func decodeStored(_ bytes: [UInt8], of collection: String) throws -> SyncMark {
        do {
            return try decode(bytes)
        } catch let error as FormatError {
            throw StoreError(.corruptRecord, "SyncMark of \(collection): \(error.reason)")
        }
    }

    /// Decodes the mark's bytes in place (``ByteReader`` borrows them).
    private static func decode(_ reader: ByteReader) throws -> SyncMark {
        var m = SyncMark()
        var r = reader
        try r.fields { tag, v in
            switch tag {
            case 1: m.fetchedAt = try v.time()
            case 2: m.fetchedLSN = LSN(try v.uint())
            case 3: m.validatedAt = try v.time()
            case 4: m.lastLSN = LSN(try v.uint())
            case 5: m.etag = try v.string()
            case 6: m.lastModified = try v.string()
            case 7: m.cacheControl = try v.string()
            case 8: m.responseDate = try v.string()
            case 9: m.age = try v.string()
            case 10: m.expires = try v.string()
            case 11: m.nextCursor = try v.string()
            case 12: m.pageCount = Int(clamping: try v.uint())
            case 13: m.lastAttemptAt = try v.time()
            case 14:
                var e = FailureInfo(reason: "", status: nil, message: "", lsn: .zero)
                var inner = v.message
                try inner.fields { t, x in
                    switch t {
                    case 1: e.reason = try x.string()
                    case 2: e.status = Int(clamping: try x.uint())
                    case 3: e.message = try x.string()
                    case 4: e.lsn = LSN(try x.uint())
                    default: break
                    }
                }
                m.lastError = e
            case 15: m.consecutiveFailures = Int(clamping: try v.uint())
            case 16: m.invalidatedAt = try v.time()
            case 17: m.invalidatedLSN = LSN(try v.uint())
            case 18: m.rowsLSN = LSN(try v.uint())
            case 19: m.responseDelayMicros = try v.int()
            case 20: m.noStore = try v.bool()
            case 21:
                var page = PageMark(url: "")
                var inner = v.message
                try inner.fields { t, x in
                    switch t {
                    case 1: page.url = try x.string()
                    case 2: page.etag = try x.string()
                    case 3: page.lastModified = try x.string()
                    case 4: page.next = try x.string()
                    default: break
                    }
                }
                m.pages.append(page)
            case 22: m.resumePage = Int(clamping: try v.uint())
            case 25:
                var cursor = PushCursor(source: "", eventID: "", lsn: .zero)
                var inner = v.message
                try inner.fields { t, x in
                    switch t {
                    case 1: cursor.source = try x.string()
                    case 2: cursor.eventID = try x.string()
                    case 3: cursor.lsn = LSN(try x.uint())
                    default: break
                    }
                }
                m.pushCursors.append(cursor)
            default: break
            }
        }
        return m
    }
}
