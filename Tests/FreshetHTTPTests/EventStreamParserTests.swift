import Foundation
import Testing
@testable import FreshetHTTP

/// WHATWG HTML §9.2.6 "Interpreting an event stream", case by case.
@Suite("EventStreamParser (WHATWG HTML §9.2.6)")
struct EventStreamParserTests {
    /// Parses `text` fed in one piece.
    static func parse(_ text: String, parser: inout EventStreamParser) -> [ServerSentEvent] {
        parser.feed(Array(text.utf8))
    }

    static func parse(_ text: String) -> [ServerSentEvent] {
        var parser = EventStreamParser()
        return parse(text, parser: &parser)
    }

    @Test("a data line and a blank line dispatch a message event")
    func simple() {
        #expect(Self.parse("data: hello\n\n") == [ServerSentEvent(type: "message", data: "hello", lastEventID: "")])
    }

    @Test("several data lines are joined with LF and the last LF is removed")
    func multiLineData() {
        #expect(Self.parse("data: first\ndata:second\ndata\ndata:  third\n\n") == [ServerSentEvent(data: "first\nsecond\n\n third")])
    }

    @Test("event sets the type for one event only")
    func eventType() {
        #expect(Self.parse("event: change\ndata: a\n\ndata: b\n\n") == [ServerSentEvent(type: "change", data: "a"), ServerSentEvent(type: "message", data: "b")])
    }

    @Test("id is kept across events; an empty id resets it to the empty string")
    func lastEventID() {
        var parser = EventStreamParser()
        let events = Self.parse("id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", parser: &parser)
        #expect(events.map(\.lastEventID) == ["1", "1", ""])
        #expect(parser.lastEventID == "")
    }

    @Test("an id containing NUL is ignored and counted; the previous id stays")
    func idWithNUL() {
        var parser = EventStreamParser()
        let events = Self.parse("id: 7\ndata: a\n\nid: 8\u{0}9\ndata: b\n\n", parser: &parser)
        #expect(events.map(\.lastEventID) == ["7", "7"])
        #expect(parser.ignoredLines == 1)
    }

    @Test("an id without data dispatches nothing but sets the last event ID")
    func idOnly() {
        var parser = EventStreamParser()
        #expect(Self.parse("id: 42\n\n", parser: &parser).isEmpty)
        #expect(parser.lastEventID == "42")
    }

    @Test("retry of ASCII digits sets the reconnection time; anything else is ignored and counted")
    func retry() {
        var parser = EventStreamParser()
        _ = Self.parse("retry: 2500\n", parser: &parser)
        #expect(parser.retryMilliseconds == 2500)
        _ = Self.parse("retry: 1.5\nretry: -1\nretry:\nretry: 10s\nretry: 99999999999999999999999\n", parser: &parser)
        #expect(parser.retryMilliseconds == 2500)
        #expect(parser.ignoredLines == 5)
    }

    @Test("comments are skipped, not counted as ignored lines")
    func comments() {
        var parser = EventStreamParser()
        let events = Self.parse(": keep-alive\n:\ndata: x\n: in the middle\n\n", parser: &parser)
        #expect(events == [ServerSentEvent(data: "x")])
        #expect(parser.comments == 3)
        #expect(parser.ignoredLines == 0)
    }

    @Test("CR, LF and CRLF all end lines, also split across chunks")
    func lineEnds() {
        #expect(Self.parse("data: a\r\rdata: b\n\ndata: c\r\n\r\n") == [ServerSentEvent(data: "a"), ServerSentEvent(data: "b"), ServerSentEvent(data: "c")])
        var parser = EventStreamParser()
        var events = parser.feed(Array("data: d\r".utf8))
        events += parser.feed(Array("\ndata: e\r".utf8))
        events += parser.feed(Array("\n\r".utf8))
        events += parser.feed(Array("\n".utf8))
        // CR|LF across chunks is one line end: one event "d\ne", not two.
        #expect(events == [ServerSentEvent(data: "d\ne")])
    }

    @Test("one leading BOM is skipped; a second one is part of the field name")
    func byteOrderMark() {
        var parser = EventStreamParser()
        let events = Self.parse("\u{FEFF}data: a\n\n\u{FEFF}data: b\n\n", parser: &parser)
        #expect(events == [ServerSentEvent(data: "a")])
        #expect(parser.ignoredLines == 1)
    }

    @Test("a BOM split across chunks is still skipped")
    func splitByteOrderMark() {
        var parser = EventStreamParser()
        var events = parser.feed([0xEF, 0xBB])
        events += parser.feed([0xBF] + Array("data: a\n\n".utf8))
        #expect(events == [ServerSentEvent(data: "a")])
    }

    @Test("only one space after the colon is removed; a line without a colon is a field with an empty value")
    func fieldSyntax() {
        #expect(Self.parse("data:no space\n\n") == [ServerSentEvent(data: "no space")])
        #expect(Self.parse("data:   three\n\n") == [ServerSentEvent(data: "  three")])
        #expect(Self.parse("data: a: b\n\n") == [ServerSentEvent(data: "a: b")])
        #expect(Self.parse("data\n\n") == [ServerSentEvent(data: "")])
    }

    @Test("unknown fields are ignored and counted; the event around them is kept")
    func unknownField() {
        var parser = EventStreamParser()
        let events = Self.parse("data: a\nbogus line without meaning\nDATA: b\nid : 3\n\n", parser: &parser)
        #expect(events == [ServerSentEvent(data: "a")])
        #expect(parser.ignoredLines == 3)
    }

    @Test("an event without data dispatches nothing and its type does not leak into the next")
    func noData() {
        #expect(Self.parse("event: change\n\ndata: x\n\n") == [ServerSentEvent(type: "message", data: "x")])
    }

    @Test("an event cut off by the end of the stream is discarded")
    func endOfStream() {
        var parser = EventStreamParser()
        #expect(Self.parse("id: 5\ndata: partial\n", parser: &parser).isEmpty)
        parser.finish()
        #expect(Self.parse("data: next\n\n", parser: &parser) == [ServerSentEvent(data: "next", lastEventID: "5")])
    }

    @Test("invalid UTF-8 becomes U+FFFD")
    func invalidUTF8() {
        var parser = EventStreamParser()
        let events = parser.feed(Array("data: a".utf8) + [0xFF] + Array("b\n\n".utf8))
        #expect(events == [ServerSentEvent(data: "a\u{FFFD}b")])
    }

    @Test("an event over the size limit is dropped and counted; the stream goes on")
    func oversized() {
        var parser = EventStreamParser(maximumEventBytes: 32)
        let big = String(repeating: "x", count: 40)
        let events = Self.parse("data: \(big)\ndata: more\n\ndata: ok\n\n", parser: &parser)
        #expect(events == [ServerSentEvent(data: "ok")])
        #expect(parser.oversizedEvents == 1)
    }

    @Test("byte by byte gives the same events as one piece")
    func byteByByte() {
        let text = "\u{FEFF}: hi\r\nid: 1\r\nevent: change\r\ndata: {\"a\":1}\r\ndata: é\r\n\r\nretry: 10\rid: 2\rdata: z\r\r"
        var whole = EventStreamParser()
        let expected = whole.feed(Array(text.utf8))
        var parser = EventStreamParser()
        var events: [ServerSentEvent] = []
        for byte in Array(text.utf8) { events += parser.feed([byte]) }
        #expect(events == expected)
        #expect(expected == [ServerSentEvent(type: "change", data: "{\"a\":1}\né", lastEventID: "1"), ServerSentEvent(data: "z", lastEventID: "2")])
        #expect(parser.retryMilliseconds == 10)
    }
}
