import Foundation
import FreshetHTTP

/// The entry points `freshet-fuzz` (tools/fuzz, docs/reliability.md "Fuzzing") feeds with
/// libFuzzer's inputs, and the fuzz regression test replays: each takes arbitrary bytes and
/// runs one parser of untrusted input. Every outcome is fine except a crash, a hang or a
/// sanitizer report; typed errors are the expected answer to bad input.
package enum FuzzTargets {
    /// The names `freshet-fuzz` accepts, one per target below.
    package static let names = ["record", "jsonl", "headers", "rows", "events"]

    /// Runs the target called `name` on `bytes` and returns how many of its parsers refused
    /// the input (threw or answered nil); nil for an unknown name.
    @discardableResult
    package static func run(_ name: String, _ bytes: [UInt8]) -> Int? {
        switch name {
        case "record": record(bytes)
        case "jsonl": jsonLines(bytes)
        case "headers": headers(bytes)
        case "rows": rows(bytes)
        case "events": events(bytes)
        default: nil
        }
    }

    /// 1 when `body` throws (bad input is expected to), else 0.
    private static func refused<E: Error>(_ body: () throws(E) -> Void) -> Int {
        do {
            try body()
            return 0
        } catch {
            return 1
        }
    }

    /// The log record decoder (``LogRecord/decode(_:expectedLSN:)``), with and without an
    /// expected LSN.
    /// The input is also decoded with a correct CRC-32C appended, so the fuzzer reaches the
    /// parser behind the checksum.
    package static func record(_ bytes: [UInt8]) -> Int {
        let crc = CRC32C.checksum(bytes[...])
        let sealed = bytes + [UInt8(truncatingIfNeeded: crc >> 24), UInt8(truncatingIfNeeded: crc >> 16), UInt8(truncatingIfNeeded: crc >> 8), UInt8(truncatingIfNeeded: crc)]
        return refused { _ = try LogRecord.decode(bytes) } + refused { _ = try LogRecord.decode(sealed, expectedLSN: 1) }
    }

    /// The JSON Lines importer's line parser (`freshet import`), one line per input line.
    package static func jsonLines(_ bytes: [UInt8]) -> Int {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().reduce(0) { sum, line in
            sum + refused { _ = try Store.parseLine(String(line.element), number: line.offset + 1) }
        }
    }

    /// The response header parsers: `Cache-Control`, `Link`, `Retry-After`, HTTP dates and
    /// entity tags, each given the whole input as one field value.
    /// Returns how many of Retry-After, HTTP-date and entity tag answered nil (Cache-Control
    /// and Link never refuse: they skip what they cannot read).
    package static func headers(_ bytes: [UInt8]) -> Int {
        let value = String(decoding: bytes, as: UTF8.self)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        _ = CacheControl(parsing: value)
        _ = LinkHeader(parsing: value, baseURL: URL(string: "https://api.test/v1/items?page=2"))
        _ = LinkHeader(parsing: value, baseURL: nil)
        return (RetryAfter(parsing: value, now: now) == nil ? 1 : 0) + (HTTPDate.parse(value, now: now) == nil ? 1 : 0) + (EntityTag(parsing: value) == nil ? 1 : 0)
    }

    /// Row extraction from a response body (``JSONTape`` and the canonical row writer), for a
    /// list resource (rows in `results`, IDs from `url`, `next` paging) and a document.
    package static func rows(_ bytes: [UInt8]) -> Int {
        let body = Data(bytes)
        return refused { _ = try RowExtraction.extract(body, for: .list("items", path: "/items")) }
            + refused { _ = try RowExtraction.extract(body, for: .list("items", path: "/items", rowsAt: "data", id: .field("id"))) }
            + refused { _ = try RowExtraction.extract(body, for: .document("item", path: "/item/1")) }
    }

    /// A server-sent event stream (``EventStreamParser``, fed whole and split at every 7th
    /// byte, which must give the same events) and each event's data as a change message
    /// (``ChangeMessage``, read with a `todos` resource). Returns how many events' data were
    /// refused.
    package static func events(_ bytes: [UInt8]) -> Int {
        var whole = EventStreamParser(maximumEventBytes: 4096)
        let events = whole.feed(bytes)
        var split = EventStreamParser(maximumEventBytes: 4096)
        var again: [ServerSentEvent] = []
        var start = 0
        while start < bytes.count {
            again += split.feed(bytes[start..<min(bytes.count, start + 7)])
            start += 7
        }
        precondition(again == events, "the event-stream parser gave other events for the same bytes in pieces")
        let todos = Resource(collection: "todos", path: "/todos", rows: .rootArray, id: .field("id"))
        return events.reduce(0) { sum, event in
            sum + refused { () throws(ChangeMessage.Malformed) in _ = try ChangeMessage.parse(event.data).ops(reading: todos) }
        }
    }
}
