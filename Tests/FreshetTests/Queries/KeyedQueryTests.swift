import Foundation
@testable import Freshet
import FreshetHTTP
import FreshetTesting
import Testing
import TestSupport

/// Keyed queries (issue 10 item 4): a name and typed parameters, normalized into the collection.
@Suite("Keyed queries: one declaration, one collection per key", .scaledTimeLimit(minutes: 1))
struct KeyedQueryTests {
    static func comments(_ parameters: [String: QueryKey.Value]) -> Resource {
        .keyed(QueryKey("comments", parameters), path: "/comments", rows: .rootArray, id: .field("id"), freshness: .maxAge(.seconds(60)))
    }

    @Test("parameters in any order make the same collection name, sorted and escaped")
    func normalized() {
        #expect(QueryKey("comments", ["postId": 3, "user": "a,b"]).collection == "comments{postId=3,user=a%2Cb}")
        #expect(QueryKey("comments", ["user": "a,b", "postId": 3]) == QueryKey("comments", ["postId": 3, "user": "a,b"]))
        #expect(QueryKey("todos").collection == "todos")
        #expect(QueryKey.collection("comments{postId=3}", isKeyOf: "comments"))
        #expect(!QueryKey.collection("commentsX{postId=3}", isKeyOf: "comments"))
    }

    @Test("a path parameter of . or .. is written %2E, never as a dot-segment that would send the request to the parent path", arguments: [
        (".", "/comments/%2E"), ("..", "/comments/%2E%2E"), ("a/b", "/comments/a%2Fb"), ("...", "/comments/..."), ("v1.2", "/comments/v1.2"),
    ])
    func dotSegments(value: String, path: String) {
        let resource = Resource.keyed(QueryKey("c", ["postId": .string(value)]), path: "/comments/{postId}", rows: .rootArray, id: .field("id"))
        #expect(resource.path == path)
    }

    @Test("keyed queries with parameters in different orders share one request and one collection")
    func shareOneRequest() async throws {
        try await withScriptedStore { h in
            let gate = Gate()
            h.transport.on("/comments?postId=3&sort=new", reply: .held(gate, then: ItemsFixture.reply(["c1"])))
            let store = h.store
            let one = Task { try await store.refresh(Self.comments(["postId": 3, "sort": "new"])) }
            await gate.waitUntilReached(1)
            let two = Task { try await store.refresh(Self.comments(["sort": "new", "postId": 3])) }
            while store.refreshes.waiterCount("comments{postId=3,sort=new}") < 2 { await Task.yield() }
            gate.release()
            let first = try await one.value
            let second = try await two.value
            #expect(first == second)
            #expect(h.transport.requests.count == 1)
            #expect(try store.snapshot("comments{postId=3,sort=new}").rows == ItemsFixture.rows(["c1"]))
        }
    }

    @Test("each key has its own rows; a path placeholder takes its parameter; invalidation can target every key of a name")
    func ownRowsAndInvalidation() async throws {
        try await withScriptedStore { h in
            h.transport.on("/comments?postId=1", reply: ItemsFixture.reply(["a"]))
            h.transport.on("/comments?postId=2", reply: ItemsFixture.reply(["b"]))
            h.transport.on("/posts/7", reply: .json(#"{"id":7}"#))
            try await h.store.refresh(Self.comments(["postId": 1]))
            try await h.store.refresh(Self.comments(["postId": 2]))
            try await h.store.refresh(.keyed(QueryKey("post", ["id": 7]), path: "/posts/{id}", rows: .document, id: .field("id"), freshness: .maxAge(.seconds(60))))
            #expect(try h.store.snapshot("comments{postId=1}").rows.map(\.id) == ["a"])
            #expect(try h.store.snapshot("comments{postId=2}").rows.map(\.id) == ["b"])
            #expect(try h.store.snapshot("post{id=7}").rows.map(\.id) == ["7"])
            let invalidated = try await h.store.invalidate(keysNamed: "comments")
            #expect(invalidated == ["comments{postId=1}", "comments{postId=2}"])
            #expect(try h.store.snapshot("comments{postId=1}").query.isStale)
            #expect(try h.store.snapshot("post{id=7}").query.isStale == false)
            try await h.store.invalidate(Self.comments(["postId": 2]).collection)
        }
    }
}
