import Foundation
import FreshetHTTP
import Testing
import TestSupport
@testable import Freshet

/// Issue 7 item 8: a maximum response size enforced while the body streams, and an overall
/// deadline per request, each recorded as `fetchFailed` with its own reason.
@Suite("Limits on what a server can make us do", .scaledTimeLimit(minutes: 2))
struct ResponseLimitTests {
    @Test("a body larger than maxResponseBytes fails with responseTooLarge, recorded once and not retried", arguments: ["0", "1"])
    func oversize(chunked: String) async throws {
        try await withServerAndStore(configure: { $0.maxResponseBytes = 100_000; $0.retry = .init(maxAttempts: 3) }) { server, store throws in
            let resource = Resource(collection: "big", path: "/test/big", query: ["bytes": "1000000", "chunked": chunked], rows: .array(at: "results"), id: .field("id"))
            let error = await #expect(throws: FetchError.self) { try await store.refresh(resource) }
            #expect(error?.code == .responseTooLarge)
            #expect(error?.message == "GET \(server.baseURL.absoluteString)/test/big?bytes=1000000&chunked=\(chunked) failed: response from 127.0.0.1:\(server.baseURL.port ?? 0) is larger than the limit of 100000 bytes")
            #expect(try store.fetchFailures("big").map(\.reason) == ["responseTooLarge"])
            #expect(try await server.requests().count == 1)
            #expect(try store.snapshot("big").rows.isEmpty)
        }
    }

    @Test("a body of exactly maxResponseBytes is accepted")
    func atTheLimit() async throws {
        try await withServerAndStore(configure: { $0.maxResponseBytes = 100_000 }) { _, store throws in
            let resource = Resource(collection: "big", path: "/test/big", query: ["bytes": "100000", "chunked": "1"], rows: .array(at: "results"), id: .field("id"))
            #expect(try await store.refresh(resource).rows == 1)
        }
    }

    @Test("a server that trickles bytes past requestDeadline fails with deadlineExceeded, recorded per attempt and retried")
    func trickle() async throws {
        try await withServerAndStore(configure: { $0.requestDeadline = .milliseconds(300); $0.retry = .init(maxAttempts: 2) }) { server, store throws in
            // One byte every 20 ms for 100 s: the idle timeout (30 s) never fires.
            let resource = Resource(collection: "slow", path: "/test/trickle", query: ["bytes": "5000", "interval_ms": "20"], rows: .array(at: "results"), id: .field("id"))
            let error = await #expect(throws: FetchError.self) { try await store.refresh(resource) }
            #expect(error?.code == .deadlineExceeded)
            #expect(error?.message.hasSuffix("failed: no complete response from 127.0.0.1:\(server.baseURL.port ?? 0) within the 300 ms deadline") == true)
            #expect(try store.fetchFailures("slow").map(\.reason) == ["deadlineExceeded", "deadlineExceeded"])
            #expect(try await server.requests().count == 2)
        }
    }
}
