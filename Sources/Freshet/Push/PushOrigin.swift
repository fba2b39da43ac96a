/// Where a pushed `changed` event came from: the push source's name and the event's ID in
/// that source's stream. Stored in the event (docs/log-format.md §6.6, field 2) so the fold
/// can tell a re-delivered event from a new one, and so the source can resume after a restart.
///
/// ```swift
/// let origin = PushOrigin(source: "todos-sse", eventID: "42")
/// try await store.push([.upsert(row)], to: "todos", origin: origin)
/// ```
///
/// Duplicate rule (see ``repeats(_:)``): when both IDs are decimal sequence numbers, an event
/// whose sequence is not greater than the last one folded into the collection from the same
/// source is a duplicate; otherwise (opaque IDs) only an ID equal to the last one is.
public struct PushOrigin: Sendable, Hashable {
    /// The push source's name, chosen by the app: 1 to 200 bytes of UTF-8 without control
    /// characters (one per stream, such as `"todos-sse"`).
    public var source: String
    /// The event's ID in the source's stream (for Server-Sent Events, the `id` field; WHATWG
    /// HTML §9.2.6): 1 to 1,024 bytes of UTF-8 without NUL, CR or LF.
    public var eventID: String

    public init(source: String, eventID: String) {
        self.source = source
        self.eventID = eventID
    }

    /// The ID read as a sequence number: 1 to 19 ASCII digits (so it fits `UInt64`), no sign,
    /// no spaces; nil for any other ID (an opaque ID).
    public var sequence: UInt64? { Self.sequence(of: eventID) }

    static func sequence(of id: String) -> UInt64? {
        let utf8 = id.utf8
        guard (1...19).contains(utf8.count), utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return UInt64(id)
    }

    /// Whether this event was already delivered, given `lastEventID`, the ID of the last event
    /// from the same source folded into the collection: its sequence is not greater than
    /// `lastEventID`'s when both are sequences, else it equals `lastEventID`.
    public func repeats(_ lastEventID: String) -> Bool {
        if let mine = sequence, let last = Self.sequence(of: lastEventID) { return mine <= last }
        return eventID == lastEventID
    }

    /// The largest source name, in bytes.
    static let maxSourceBytes = 200
    /// The largest event ID, in bytes.
    static let maxEventIDBytes = 1_024

    /// Whether `source` may name a push source: 1 to 200 bytes of UTF-8 without control characters.
    static func isValidSource(_ source: String) -> Bool {
        let s = source.utf8
        return !s.isEmpty && s.count <= maxSourceBytes && !s.contains(where: { $0 < 0x20 || $0 == 0x7F })
    }

    /// Checks the lengths and characters stated on ``source`` and ``eventID``.
    func validate(in collection: String) throws(StoreError) {
        guard Self.isValidSource(source) else {
            throw StoreError(.invalidEvent, "changed for \(collection): push source \(source.debugDescription) must be 1 to \(Self.maxSourceBytes) bytes of UTF-8 without control characters")
        }
        let e = eventID.utf8
        guard !e.isEmpty, e.count <= Self.maxEventIDBytes, !e.contains(where: { $0 == 0 || $0 == 0x0A || $0 == 0x0D }) else {
            throw StoreError(.invalidEvent, "changed for \(collection): push event ID \(eventID.debugDescription) must be 1 to \(Self.maxEventIDBytes) bytes of UTF-8 without NUL, CR or LF")
        }
    }
}
