import Foundation

/// One thing that happened to a collection, as appended to the log and folded into the
/// materialized state. The collection an event applies to is part of its ``LogRecord``.
///
/// Payload encodings are listed field by field in docs/log-format.md.
///
/// The cases whose payloads are large (a response's headers, a failure, a mutation, a
/// checkpoint) are `indirect`: their payload lives in a box of its own, so an `Event` (and a
/// ``LogRecord``) is about the size of a row change (an array and an optional push origin),
/// and copying or moving one moves that much instead of every header field. Row changes, most
/// of a log, stay inline: a box would be one more allocation per record (docs/performance.md,
/// W5, "Issue 8 speed round 4").
public enum Event: Sendable, Hashable {
    /// A response body folded in (a full replace, one page, or single rows).
    indirect case fetched(Fetched)
    /// A conditional request answered 304 Not Modified.
    indirect case notModified(NotModified)
    /// A fetch attempt failed; rows are kept.
    indirect case fetchFailed(FetchFailed)
    /// Rows pushed by the server: upserts and deletes applied to the base state.
    case changed(RowChanges)
    /// A write to a local-only collection: upserts and deletes.
    case localWrite(RowChanges)
    /// The app marked the collection stale.
    case invalidated(Invalidated)
    /// An optimistic write, durable before its request leaves.
    indirect case mutationProposed(MutationProposed)
    /// The server accepted a mutation.
    indirect case mutationConfirmed(MutationConfirmed)
    /// The server rejected a mutation.
    indirect case mutationRolledBack(MutationRolledBack)
    /// Written by compaction: the folded state through an LSN (docs/log-format.md §6.11).
    indirect case checkpoint(Checkpoint)
    /// Garbage collection removed the collection's rows and SyncMark: nobody had observed it
    /// for its gc time (docs/log-format.md §6.13, docs/queries.md "Garbage collection").
    case evicted(Evicted)

    public var kind: EventKind {
        switch self {
        case .fetched: .fetched
        case .notModified: .notModified
        case .fetchFailed: .fetchFailed
        case .changed: .changed
        case .localWrite: .localWrite
        case .invalidated: .invalidated
        case .mutationProposed: .mutationProposed
        case .mutationConfirmed: .mutationConfirmed
        case .mutationRolledBack: .mutationRolledBack
        case .checkpoint: .checkpoint
        case .evicted: .evicted
        }
    }
}

extension Event {
    /// A response body folded into a collection.
    public struct Fetched: Sendable, Hashable {
        /// Where the rows go.
        public enum Placement: Sendable, Hashable {
            /// The rows replace the whole collection.
            case replace
            /// The rows are page `index` (0-based) of a paged collection and replace that page;
            /// `isLast` drops every page after it. A row ID already present on another page
            /// moves to this one, so a collection never holds an ID twice.
            case page(index: Int, isLast: Bool)
            /// The rows are upserted one by one (detail documents); other rows stay.
            case upsert
        }

        public var placement: Placement
        /// The rows, in server order.
        public var rows: [Row] {
            // Setting the rows drops the slices, which describe the rows they came with.
            didSet { slices = nil }
        }
        /// The rows' JSON as ranges of one buffer (the response body), when a refresh made the
        /// rows from it: the same bytes as `rows[i].json`, for encoding without a `Data` access
        /// per row. Not part of the event's value (`==` and `hash` leave it out).
        var slices: RowSlices?
        /// The HTTP exchange the rows came from.
        public var response: ResponseInfo
        /// The next page's cursor (for PokeAPI, the absolute `next` URL); nil on the last page.
        public var nextCursor: String?
        /// The store's last LSN when the request was sent. An invalidation after it is not
        /// satisfied by this response (the data may predate it), so the fold keeps it.
        public var basisLSN: LSN?
        /// The server said `Cache-Control: no-store` (RFC 9111 §5.2.2.5): the rows are kept in
        /// memory only; the event carries none and the fold removes any stored rows.
        public var rowsWithheld: Bool
        /// The freshness policy and retry settings the refresh ran under; nil in events that
        /// were not appended by a refresh, and in logs written before it was recorded.
        public var readPolicy: ReadPolicy?

        public init(placement: Placement, rows: [Row], response: ResponseInfo, nextCursor: String? = nil, basisLSN: LSN? = nil, rowsWithheld: Bool = false,
                    readPolicy: ReadPolicy? = nil) {
            self.placement = placement
            self.rows = rows
            self.response = response
            self.nextCursor = nextCursor
            self.basisLSN = basisLSN
            self.rowsWithheld = rowsWithheld
            self.readPolicy = readPolicy
        }

        /// The rows of `rows` with `slices` describing their JSON (``RowSlices``); `slices`
        /// must hold one range per row, with each row's bytes.
        init(placement: Placement, rows: [Row], slices: RowSlices?, response: ResponseInfo, nextCursor: String?, basisLSN: LSN?, readPolicy: ReadPolicy?) {
            precondition(slices.map { $0.count == rows.count } ?? true, "\(slices?.count ?? 0) row slices for \(rows.count) rows")
            self.init(placement: placement, rows: rows, response: response, nextCursor: nextCursor, basisLSN: basisLSN, readPolicy: readPolicy)
            self.slices = slices
        }

        public static func == (a: Fetched, b: Fetched) -> Bool {
            a.placement == b.placement && a.rows == b.rows && a.response == b.response && a.nextCursor == b.nextCursor
                && a.basisLSN == b.basisLSN && a.rowsWithheld == b.rowsWithheld && a.readPolicy == b.readPolicy
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(placement)
            hasher.combine(rows)
            hasher.combine(response)
            hasher.combine(nextCursor)
            hasher.combine(basisLSN)
            hasher.combine(rowsWithheld)
            hasher.combine(readPolicy)
        }
    }

    /// A 304 Not Modified answer to a conditional request.
    public struct NotModified: Sendable, Hashable {
        public var response: ResponseInfo
        /// The page that was revalidated, for paged collections (0-based); nil otherwise.
        public var page: Int?
        /// See ``Fetched/basisLSN``.
        public var basisLSN: LSN?
        /// See ``Fetched/readPolicy``.
        public var readPolicy: ReadPolicy?

        public init(response: ResponseInfo, page: Int? = nil, basisLSN: LSN? = nil, readPolicy: ReadPolicy? = nil) {
            self.response = response
            self.page = page
            self.basisLSN = basisLSN
            self.readPolicy = readPolicy
        }
    }

    /// A failed fetch attempt. The collection's rows are kept.
    public struct FetchFailed: Sendable, Hashable {
        /// The URL that was requested.
        public var url: String
        /// The page of a paged collection that was requested (0-based, the index of its
        /// ``SyncMark/pages`` entry), or that named the refused next page (`crossOrigin`,
        /// `pagingLoop`, `tooManyPages`); nil for unpaged collections and older logs.
        public var page: Int?
        /// What went wrong, such as `httpStatus`, `timedOut`, `cannotConnect`, `malformedBody`
        /// (the raw value of ``FetchError/Code``).
        public var reason: String
        /// The HTTP status when the server answered, else nil.
        public var status: Int?
        /// One line for a person.
        public var message: String
        /// The attempt number, from 1.
        public var attempt: Int
        /// How long the attempt took, in microseconds, when measured.
        public var durationMicros: Int64?
        /// See ``Fetched/readPolicy``.
        public var readPolicy: ReadPolicy?

        public init(url: String, page: Int? = nil, reason: String, status: Int? = nil, message: String, attempt: Int = 1, durationMicros: Int64? = nil,
                    readPolicy: ReadPolicy? = nil) {
            self.url = url
            self.page = page
            self.reason = reason
            self.status = status
            self.message = message
            self.attempt = attempt
            self.durationMicros = durationMicros
            self.readPolicy = readPolicy
        }
    }

    /// Row upserts and deletes, applied in order.
    public struct RowChanges: Sendable, Hashable {
        public enum Op: Sendable, Hashable {
            /// Insert the row at the end of the collection, or replace the row with its ID in place.
            case upsert(Row)
            /// Remove the row with this ID (no effect when absent).
            case delete(id: String)
        }
        public var ops: [Op]
        /// For a `changed` event from a push source: the source and the event's ID, so a
        /// re-delivered event folds nothing (``PushOrigin/repeats(_:)``) and the source can
        /// resume from ``SyncMark/pushCursors``. Nil for `localWrite` (which refuses one) and
        /// for pushes without an event ID.
        public var origin: PushOrigin?
        public init(_ ops: [Op], origin: PushOrigin? = nil) {
            self.ops = ops
            self.origin = origin
        }
    }

    /// The app marked a collection stale.
    public struct Invalidated: Sendable, Hashable {
        public var reason: String?
        public init(reason: String? = nil) { self.reason = reason }
    }

    /// Garbage collection evicted a collection nobody had observed for its gc time
    /// (TanStack Query's `gcTime`): the fold removes its rows and its SyncMark, unless a
    /// pending mutation names it or it was never fetched (a local-only collection), in which
    /// case the fold changes nothing (docs/log-format.md §10.8). Both durations are for
    /// people and `freshet why`; the fold does not read them.
    public struct Evicted: Sendable, Hashable {
        /// How long nobody in the evicting process had observed, read or written the
        /// collection, in microseconds.
        public var unobservedMicros: Int64
        /// The gc time that applied (``Configuration/gcTime`` or the resource's own), in
        /// microseconds.
        public var gcTimeMicros: Int64

        public init(unobservedMicros: Int64, gcTimeMicros: Int64) {
            self.unobservedMicros = unobservedMicros
            self.gcTimeMicros = gcTimeMicros
        }
    }
}

/// What the log keeps of one HTTP exchange: the validators and freshness headers verbatim
/// (so freshness can be computed again later, per RFC 9111 §4.2), sizes and duration.
/// Credentials are never recorded.
public struct ResponseInfo: Sendable, Hashable {
    /// The requested URL (absolute).
    public var url: String
    /// The HTTP status code.
    public var status: Int
    /// The `ETag` header, verbatim (RFC 9110 §8.8.3).
    public var etag: String?
    /// The `Last-Modified` header, verbatim (RFC 9110 §8.8.2).
    public var lastModified: String?
    /// The `Cache-Control` header, verbatim (RFC 9111 §5.2).
    public var cacheControl: String?
    /// The `Date` header, verbatim (RFC 9110 §6.6.1).
    public var date: String?
    /// The `Age` header, verbatim (RFC 9111 §5.1).
    public var age: String?
    /// The `Expires` header, verbatim (RFC 9111 §5.3).
    public var expires: String?
    /// How long the exchange took, in microseconds.
    public var durationMicros: Int64
    /// Size of the response body, in bytes.
    public var responseBytes: Int
    /// Size of the request body, in bytes.
    public var requestBytes: Int

    public init(
        url: String, status: Int, etag: String? = nil, lastModified: String? = nil, cacheControl: String? = nil,
        date: String? = nil, age: String? = nil, expires: String? = nil,
        durationMicros: Int64 = 0, responseBytes: Int = 0, requestBytes: Int = 0
    ) {
        self.url = url
        self.status = status
        self.etag = etag
        self.lastModified = lastModified
        self.cacheControl = cacheControl
        self.date = date
        self.age = age
        self.expires = expires
        self.durationMicros = durationMicros
        self.responseBytes = responseBytes
        self.requestBytes = requestBytes
    }
}
