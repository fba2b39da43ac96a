/// Interprets a `text/event-stream` body as it arrives, exactly as WHATWG HTML §9.2.6
/// ("Interpreting an event stream") says: the stream is UTF-8 with one optional leading BOM;
/// lines end with CRLF, LF or CR (a CR at the end of one chunk and an LF at the start of the
/// next are one line end); a blank line dispatches the event; a line starting with `:` is a
/// comment; `field:value` (one leading space of the value removed) or a whole line as a field
/// with an empty value. Fields: `event` sets the type, `data` appends a line, `id` sets the
/// last event ID unless it contains NUL, `retry` sets the reconnection time when it is ASCII
/// digits only. Everything else is ignored, as the standard requires, and counted in
/// ``ignoredLines`` so a client can report it.
///
/// ```swift
/// var parser = EventStreamParser()
/// for event in parser.feed(Array("id: 1\ndata: hello\n\n".utf8)) { print(event.data) }
/// ```
///
/// Data at the end of the stream not followed by a blank line is discarded (§9.2.6: "Once the
/// end of the file is reached, any pending data must be discarded"); call ``finish()``.
///
/// Memory stays bounded: an event whose lines pass ``maximumEventBytes`` is dropped (the rest
/// of it, up to the next blank line, is skipped) and counted in ``oversizedEvents``; the last
/// event ID it set before passing the limit is kept.
public struct EventStreamParser: Sendable {
    /// The most bytes one event's lines (field names, values and line ends) may take.
    public let maximumEventBytes: Int
    /// The last event ID buffer (§9.2.6): the latest `id` field's value, kept across events.
    public private(set) var lastEventID = ""
    /// The latest valid `retry` field, in milliseconds; nil when none came.
    public private(set) var retryMilliseconds: Int?
    /// Lines the standard says to ignore: unknown field names, an `id` containing NUL, a
    /// `retry` that is not ASCII digits (or too large). Comments are not counted.
    public private(set) var ignoredLines = 0
    /// Events dropped because their lines passed ``maximumEventBytes``.
    public private(set) var oversizedEvents = 0
    /// Comment lines seen (a server's keep-alive).
    public private(set) var comments = 0

    private var line: [UInt8] = []
    private var data: [UInt8] = []
    private var hasData = false
    private var eventType: [UInt8] = []
    private var eventBytes = 0
    private var discarding = false
    /// The line being read passed the limit: its end is not a blank line.
    private var inDroppedLine = false
    private var atStreamStart = true
    private var lastWasCR = false

    /// A parser for one stream. `maximumEventBytes` (default 1 MiB) must be at least 1.
    public init(maximumEventBytes: Int = 1 << 20) {
        precondition(maximumEventBytes >= 1, "EventStreamParser needs maximumEventBytes >= 1, got \(maximumEventBytes)")
        self.maximumEventBytes = maximumEventBytes
    }

    /// Feeds the next bytes of the stream and returns the events they completed, in order.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        if let events = bytes.withContiguousStorageIfAvailable({ feed(buffer: $0) }) { return events }
        return Array(bytes).withUnsafeBufferPointer { feed(buffer: $0) }
    }

    /// Reads `buffer` a run at a time: the bytes up to the next CR or LF are appended at once.
    private mutating func feed(buffer: UnsafeBufferPointer<UInt8>) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        var i = 0
        let n = buffer.count
        while i < n {
            let byte = buffer[i]
            if byte == 0x0A || byte == 0x0D {
                i += 1
                if byte == 0x0A, lastWasCR {
                    // The LF of a CRLF whose CR ended the previous line.
                    lastWasCR = false
                    continue
                }
                lastWasCR = byte == 0x0D
                if let event = endLine() { events.append(event) }
                continue
            }
            lastWasCR = false
            var end = i + 1
            while end < n, buffer[end] != 0x0A, buffer[end] != 0x0D { end += 1 }
            let run = UnsafeBufferPointer(rebasing: buffer[i..<end])
            i = end
            if discarding {
                // Only whether the line is blank matters now: one byte says it is not.
                if line.isEmpty, !inDroppedLine { line.append(run[0]) }
                continue
            }
            if eventBytes + run.count > maximumEventBytes {
                dropEvent()
                continue
            }
            line.append(contentsOf: run)
            eventBytes += run.count
        }
        return events
    }

    /// Ends the stream: a partial line and an event without its blank line are discarded.
    /// The last event ID and the retry time are kept (a reconnection uses them).
    public mutating func finish() {
        line.removeAll()
        resetEvent()
        discarding = false
        inDroppedLine = false
        lastWasCR = false
        atStreamStart = true
    }

    private mutating func dropEvent() {
        oversizedEvents += 1
        discarding = true
        inDroppedLine = true
        line.removeAll()
        resetEvent()
    }

    private mutating func resetEvent() {
        data.removeAll()
        hasData = false
        eventType.removeAll()
        eventBytes = 0
    }

    private mutating func endLine() -> ServerSentEvent? {
        eventBytes += 1
        var current = line
        line.removeAll(keepingCapacity: true)
        if atStreamStart {
            atStreamStart = false
            // One leading U+FEFF BYTE ORDER MARK is skipped (§9.2.6).
            if current.starts(with: [0xEF, 0xBB, 0xBF]) { current.removeFirst(3) }
        }
        if discarding {
            if inDroppedLine {
                inDroppedLine = false
                return nil
            }
            if current.isEmpty {
                discarding = false
                resetEvent()
            }
            return nil
        }
        if current.isEmpty { return dispatch() }
        if current[0] == 0x3A {
            comments += 1
            return nil
        }
        let field: ArraySlice<UInt8>
        var value: ArraySlice<UInt8>
        if let colon = current.firstIndex(of: 0x3A) {
            field = current[..<colon]
            value = current[(colon + 1)...]
            if value.first == 0x20 { value = value.dropFirst() }
        } else {
            field = current[...]
            value = []
        }
        switch String(decoding: field, as: UTF8.self) {
        case "event":
            eventType = Array(value)
        case "data":
            data.append(contentsOf: value)
            data.append(0x0A)
            hasData = true
        case "id":
            if value.contains(0) {
                ignoredLines += 1
            } else {
                lastEventID = String(decoding: value, as: UTF8.self)
            }
        case "retry":
            // ASCII digits only; a value too large for Int is ignored like any other bad one.
            if !value.isEmpty, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let ms = Int(String(decoding: value, as: UTF8.self)) {
                retryMilliseconds = ms
            } else {
                ignoredLines += 1
            }
        default:
            ignoredLines += 1
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer { resetEvent() }
        guard hasData else { return nil }
        if data.last == 0x0A { data.removeLast() }
        let type = eventType.isEmpty ? "message" : String(decoding: eventType, as: UTF8.self)
        return ServerSentEvent(type: type, data: String(decoding: data, as: UTF8.self), lastEventID: lastEventID)
    }
}
