import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Testing
import TestSupport

/// `freshet dump` and `freshet why` name the page (index and URL) of each `fetched`,
/// `notModified` and `fetchFailed` record of a paged collection, and `why` says where the
/// next refresh of an infinite list resumes after a page failed (``SyncMark/resumePage``).
@Suite("dump and why: the page of a 304 or a failure, and the resume point", .scaledTimeLimit(minutes: 1))
struct PagedDumpWhyTests {
    /// Three pages loaded (LSN 1–3), then a refresh that confirms pages 0 and 1 by 304
    /// (LSN 4–5) and fails at page 2 with a 503 (LSN 6, one attempt).
    func withStoppedRevalidation(_ body: (ScriptedStore) async throws -> Void) async throws {
        try await withScriptedStore(.scripted(retry: .init(maxAttempts: 1, jitter: 0))) { h in
            for n in 1...3 {
                h.transport.on("/p?page=\(n)", reply: .json(PagedFixture.body(n, of: 3), headers: ["ETag": #""p\#(n)""#]),
                               n == 3 ? .status(503) : .status(304, headers: ["ETag": #""p\#(n)""#]), .status(304))
            }
            try await h.store.refresh(PagedFixture.resource)
            for _ in 1...2 { try await h.store.loadMore(PagedFixture.resource) }
            _ = await expectFetchError { try await h.store.refresh(PagedFixture.resource) }
            try await body(h)
        }
    }

    @Test("dump names the page and its URL on fetched, notModified and fetchFailed lines")
    func dumpNamesPages() async throws {
        try await withStoppedRevalidation { h in
            h.store.close()
            let run = runTool(["dump", h.directory.path])
            #expect(run.status == 0)
            #expect(run.stderr == [])
            let t = LogRecord.iso8601(h.clock.start)
            #expect(run.stdout == [
                "     1  \(t)  fetched            pages           page 0 (https://api.test/p?page=1), 2 rows (1 … 2), keeps later pages, 200, ETag \"p1\", 0.0 ms, 82 bytes",
                "     2  \(t)  fetched            pages           page 1 (https://api.test/p?page=2), 2 rows (3 … 4), keeps later pages, 200, ETag \"p2\", 0.0 ms, 82 bytes",
                "     3  \(t)  fetched            pages           page 2 (https://api.test/p?page=3), 2 rows (5 … 6), drops later pages, 200, ETag \"p3\", 0.0 ms, 59 bytes",
                "     4  \(t)  notModified        pages           304 Not Modified, page 0 (https://api.test/p?page=1), ETag \"p1\", 0.0 ms, 0 bytes",
                "     5  \(t)  notModified        pages           304 Not Modified, page 1 (https://api.test/p?page=2), ETag \"p2\", 0.0 ms, 0 bytes",
                "     6  \(t)  fetchFailed        pages           page 2 (https://api.test/p?page=3), attempt 1: httpStatus 503 — GET https://api.test/p?page=3 answered 503 Service Unavailable",
            ])
        }
    }

    @Test("dump --json carries the page of a fetchFailed, and export and import keep it")
    func jsonPage() async throws {
        try await withStoppedRevalidation { h in
            let run = h.dumpJSON()
            let objects = try run.stdout.map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            }
            #expect(objects.map { $0["page"] as? Int } == [0, 1, 2, 0, 1, 2])
            #expect(objects[5]["url"] as? String == "https://api.test/p?page=3")
            try h.reopen()
            var lines: [String] = []
            _ = try h.store.exportLog { lines.append($0) }
            #expect(lines.count == 6)
            #expect(lines.last?.contains(#""page":2,"reason":"httpStatus""#) == true)
            try await withTemporaryDirectory { other in
                let target = other.appendingPathComponent("copy")
                #expect(try Store.importLog(lines: lines, into: target).records == 6)
                let copy = try Store(directory: target, configuration: .test(), dependencies: .test())
                defer { copy.close() }
                guard case .fetchFailed(let failed)? = try copy.allRecords().last?.event else {
                    Issue.record("the last imported record is not fetchFailed")
                    return
                }
                #expect(failed.page == 2)
                #expect(try copy.snapshot("pages").syncMark?.resumePage == 2)
            }
        }
    }

    @Test("why says the revalidation stopped before page 2 and the next refresh resumes there; a finished one says nothing of it")
    func whyNamesResumePoint() async throws {
        try await withStoppedRevalidation { h in
            h.store.close()
            let t = LogRecord.iso8601(h.clock.start)
            var run = runTool(["why", h.directory.path, "pages", "--lsn", "6"])
            #expect(run.status == 0)
            #expect(run.stdout.first == "pages: failing since \(t) (LSN 6): 1 failed attempt, last httpStatus 503: GET https://api.test/p?page=3 answered 503 Service Unavailable; "
                + "showing rows last synced at \(t); fresh for 60 s more (maxAge 60 s, age 0 s); the revalidation of the loaded pages stopped before page 2 (https://api.test/p?page=3): the next refresh resumes there")
            #expect(run.stdout.last == "       6  \(t)  fetchFailed        pages           page 2 (https://api.test/p?page=3), attempt 1: httpStatus 503 — GET https://api.test/p?page=3 answered 503 Service Unavailable")
            run = runTool(["why", h.directory.path, "pages", "--lsn", "6", "--json"])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.joined().utf8)) as? [String: Any])
            #expect(object["resumePage"] as? Int == 2)
            // The next refresh resumes at page 2 (one request) and finishes: no resume point.
            try h.reopen()
            h.transport.removeRequests()
            try await h.store.refresh(PagedFixture.resource)
            #expect(h.transport.requests.map(\.request.url.query) == ["page=3"])
            h.store.close()
            run = runTool(["why", h.directory.path, "pages", "--lsn", "7"])
            #expect(run.stdout.first == "pages: fresh, renewed by a 304: fresh for 60 s more (maxAge 60 s, age 0 s); last validated by a 304 at \(t) (LSN 7)")
            run = runTool(["why", h.directory.path, "pages", "--lsn", "7", "--json"])
            let after = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.joined().utf8)) as? [String: Any])
            #expect(after["resumePage"] is NSNull)
        }
    }
}
