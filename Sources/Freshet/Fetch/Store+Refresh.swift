import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FreshetHTTP

/// What one ``Store/refresh(_:)`` did.
public struct RefreshSummary: Sendable, Hashable {
    /// How many pages (requests) were fetched.
    public var pages: Int
    /// How many rows the fetched pages held in all.
    public var rows: Int
    /// The LSN of the last `fetched` event appended.
    public var lsn: LSN
}

extension Store {
    /// Fetches `resource` from the network and appends what happened: one `fetched` event per
    /// page (following `next` links to the last page), or a `fetchFailed` event.
    ///
    /// Refresh returns nothing to show: observers of the collection see the new rows. While it
    /// runs, observers see status ``Snapshot/Status/loading`` (no rows yet) or
    /// ``Snapshot/Status/refreshing``.
    ///
    /// - Throws: ``FetchError`` — `httpStatus` (a status outside 200–299), `timedOut`,
    ///   `cannotConnect`, `connectionLost`, `malformedBody` (not JSON, not the expected
    ///   shape, a row without an ID), `pagingLoop`, `invalidURL`, `transport`: each one also
    ///   appended as `fetchFailed`, and the collection keeps its previous rows (pages fetched
    ///   before the failure stay). `cancelled` appends nothing. `storage` when the store
    ///   cannot append.
    @discardableResult
    public func refresh(_ resource: Resource) async throws(FetchError) -> RefreshSummary {
        if let maxAge = resource.maxAge { maxAges.withLock { $0[resource.collection] = maxAge } }
        var url = try resource.url(relativeTo: configuration.baseURL)
        do {
            try checkOpen()
            try Keys.validate(collection: resource.collection)
        } catch {
            throw FetchError(.storage, error.message, url: url.absoluteString)
        }
        beginFetch(resource.collection)
        defer { endFetch(resource.collection) }

        var page = 0
        var rowCount = 0
        var lastLSN = LSN.zero
        var seen: Set<String> = [url.absoluteString]
        while true {
            try Task.checkCancellation(or: url)
            let response = try await send(url: url, collection: resource.collection)
            guard (200..<300).contains(response.status) else {
                let reason = HTTPURLResponse.localizedString(forStatusCode: response.status)
                throw await fail(resource.collection, .httpStatus, "GET \(url.absoluteString) answered \(response.status) \(reason)", status: response.status, url: url, duration: response.duration)
            }
            if let type = response.headers["Content-Type"], !Self.isJSON(type) {
                throw await fail(resource.collection, .malformedBody, "GET \(url.absoluteString) answered \(type), not JSON", status: response.status, url: url, duration: response.duration)
            }
            let extracted: RowExtraction.Result
            do {
                extracted = try RowExtraction.extract(response.body, for: resource)
            } catch {
                throw await fail(resource.collection, .malformedBody, "GET \(url.absoluteString): \(error.reason)", status: response.status, url: url, duration: response.duration)
            }
            var next: URL?
            switch resource.paging {
            case .none: next = nil
            case .nextField: next = extracted.next.flatMap { URL(string: $0, relativeTo: response.url)?.absoluteURL }
            case .linkHeader: next = response.headers["Link"].flatMap { Self.nextLink($0, base: response.url) }
            }
            if let candidate = next {
                if seen.contains(candidate.absoluteString) || page + 1 >= configuration.maxPages {
                    throw await fail(resource.collection, .pagingLoop, "paging of \(resource.collection) does not end: page \(page + 1) would be \(candidate.absoluteString)", status: nil, url: url, duration: response.duration)
                }
                seen.insert(candidate.absoluteString)
            }
            let placement: Event.Fetched.Placement = switch (resource.rows, resource.paging) {
            case (.document, _): .upsert
            case (_, .none): .replace
            default: .page(index: page, isLast: next == nil)
            }
            let event = Event.Fetched(placement: placement, rows: extracted.rows, response: Self.info(response, url: url), nextCursor: next?.absoluteString)
            do {
                lastLSN = try await append(.fetched(event), to: resource.collection)
            } catch {
                throw FetchError(.storage, "could not append the response of \(url.absoluteString): \(error.message)", status: response.status, url: url.absoluteString)
            }
            rowCount += extracted.rows.count
            page += 1
            guard let next else { break }
            url = next
        }
        return RefreshSummary(pages: page, rows: rowCount, lsn: lastLSN)
    }

    private func send(url: URL, collection: String) async throws(FetchError) -> HTTPResponse {
        var headers = HTTPHeaders()
        for (name, value) in configuration.defaultHeaders.sorted(by: { $0.key < $1.key }) { headers.add(name: name, value: value) }
        let request = HTTPRequest(method: .get, url: url, headers: headers)
        do {
            return try await dependencies.transport.send(request)
        } catch {
            let code: FetchError.Code = switch error.code {
            case .timedOut: .timedOut
            case .cannotConnect: .cannotConnect
            case .connectionLost: .connectionLost
            case .cancelled: .cancelled
            default: .transport
            }
            if code == .cancelled || Task.isCancelled {
                throw FetchError(.cancelled, "GET \(url.absoluteString) was cancelled", url: url.absoluteString)
            }
            throw await fail(collection, code, "GET \(url.absoluteString) failed: \(error.message)", status: nil, url: url, duration: nil)
        }
    }

    /// Appends `fetchFailed` and returns the error to throw.
    private func fail(_ collection: String, _ code: FetchError.Code, _ message: String, status: Int?, url: URL, duration: Duration?) async -> FetchError {
        let event = Event.FetchFailed(url: url.absoluteString, reason: code.rawValue, status: status, message: message, attempt: 1,
                                      durationMicros: duration.map { Int64($0.seconds * 1_000_000) })
        do {
            let lsn = try await append(.fetchFailed(event), to: collection)
            return FetchError(code, message, status: status, url: url.absoluteString, lsn: lsn)
        } catch {
            return FetchError(code, "\(message) (and recording the failure failed: \(error.message))", status: status, url: url.absoluteString)
        }
    }

    static func info(_ response: HTTPResponse, url: URL) -> ResponseInfo {
        ResponseInfo(
            url: url.absoluteString, status: response.status,
            etag: response.headers["ETag"], lastModified: response.headers["Last-Modified"],
            cacheControl: response.headers.combinedValue(for: "Cache-Control"), date: response.headers["Date"],
            age: response.headers["Age"], expires: response.headers["Expires"],
            durationMicros: Int64(response.duration.seconds * 1_000_000), responseBytes: response.body.count, requestBytes: 0
        )
    }

    /// `application/json`, `text/json` or any `+json` media type (RFC 6839 §3.1).
    static func isJSON(_ contentType: String) -> Bool {
        let type = contentType.split(separator: ";", maxSplits: 1)[0].trimmingCharacters(in: .whitespaces).lowercased()
        return type == "application/json" || type == "text/json" || type.hasSuffix("+json")
    }

    /// The `rel="next"` target of a `Link` header (RFC 8288), resolved against `base`.
    static func nextLink(_ header: String, base: URL) -> URL? {
        for part in header.split(separator: ",") {
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let target = pieces.first, target.hasPrefix("<"), target.hasSuffix(">") else { continue }
            let rels = pieces.dropFirst().compactMap { param -> [String]? in
                let kv = param.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard kv.count == 2, kv[0].lowercased() == "rel" else { return nil }
                return kv[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")).lowercased().split(separator: " ").map(String.init)
            }.flatMap { $0 }
            if rels.contains("next") {
                return URL(string: String(target.dropFirst().dropLast()), relativeTo: base)?.absoluteURL
            }
        }
        return nil
    }

    func beginFetch(_ collection: String) {
        inFlight.withLock { $0[collection, default: 0] += 1 }
        hub.publish([collection])
    }

    func endFetch(_ collection: String) {
        inFlight.withLock { counts in
            let n = (counts[collection] ?? 1) - 1
            counts[collection] = n > 0 ? n : nil
        }
        hub.publish([collection])
    }
}

extension Task where Success == Never, Failure == Never {
    static func checkCancellation(or url: URL) throws(FetchError) {
        if Task.isCancelled { throw FetchError(.cancelled, "GET \(url.absoluteString) was cancelled", url: url.absoluteString) }
    }
}
