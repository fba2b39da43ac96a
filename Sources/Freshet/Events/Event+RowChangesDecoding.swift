import Foundation

extension Event {
    /// The payload of a `changed` or `localWrite` record (most of a log) decoded in one pass
    /// over its bytes: tags and lengths read in place, no closure or field reader per field, no
    /// error boxed, each row's JSON from `rows` (``RowJSONBlocks``). Nil when the payload is
    /// anything this pass does not take as it is — a truncated field, a varint over 64 bits, an
    /// ID that is not UTF-8, a row op without an ID or of an unknown kind, a push origin that
    /// does not decode — so the general decoder (``decode(kind:payload:)``) decides, with its
    /// exact error. What it returns is what the general decoder returns for the same bytes
    /// (`ByteReaderTests`): the same fields in the same order, unknown tags skipped, a repeated
    /// field's last value kept (docs/log-format.md §6.4, §6.5).
    ///
    /// Before issue 8's speed round 5 every record went through the general decoder: a closure
    /// call and a `FieldValue` per field, a typed error converted to an existential at each
    /// level, and the ops array grown from empty (docs/performance.md, W5).
    ///
    /// The ops go into `spare` (a folded record's array, ``FoldChunk/recycledOps()``: its
    /// elements overwritten in order, the ones left over removed), which is left empty.
    ///
    /// `layout` is set to where the returned event's first op lies in `payload`'s bytes
    /// (``RowChangesLayout``); left as it is when the result is nil.
    ///
    /// With `leavesOutPreparedRow`, a change the log tools fold from the prepared bytes alone
    /// (``RowChangesLayout/isPreparedUpsert``: one upserted row, no origin) comes back with no
    /// ops: the same kind, an empty `ops`, `spare` left as it is (not emptied), `layout` as without it —
    /// checked as fully (the ID's UTF-8 included), so it is nil exactly when it would be. No
    /// `String`, `Data` or op is made for it (the ID and the JSON are read from the record's
    /// bytes by ``FoldChunk/append(_:bytes:layout:)``; docs/performance.md, "Issue 8 speed round 9
    /// (reading side)").
    static func decodeRowChanges(kind: EventKind, payload: ByteReader, rows: inout RowJSONBlocks, spare: inout [RowChanges.Op],
                                 layout: inout RowChangesLayout, leavesOutPreparedRow: Bool = false) -> Event? {
        let bytes = payload.bytes
        var i = payload.offset
        let end = payload.end
        var ops: [RowChanges.Op] = []
        // The spare array is taken only when an op is made: a left-out row leaves it to the next record.
        var tookSpare = false
        var count = 0
        var origin: PushOrigin?
        var first = RowChangesLayout()
        // The first op is made when a second one (or the end) shows it is needed.
        func add(_ op: RowChanges.Op) {
            if !tookSpare {
                swap(&ops, &spare)
                tookSpare = true
            }
            // Over the spare array's ops; without one, the first op as a one-element
            // literal: an allocation of its exact size, not `append`'s growth path.
            if count < ops.count {
                ops[count] = op
            } else if ops.capacity == 0 {
                ops = [op]
            } else {
                ops.append(op)
            }
            count += 1
        }
        // Whether the first op is checked but not made yet.
        var firstPending = false
        var seen = 0
        while i < end {
            guard let tag = varint(bytes, at: &i, end: end), let length = varint(bytes, at: &i, end: end),
                  length <= UInt64(end - i) else { return nil }
            let valueEnd = i + Int(length)
            defer { i = valueEnd }
            switch tag {
            case 1:
                var opLayout = RowChangesLayout()
                guard rowOpLayout(bytes, from: i, end: valueEnd, layout: &opLayout) else { return nil }
                if firstPending {
                    add(rowOp(bytes, first, rows: &rows))
                    firstPending = false
                }
                if seen == 0 {
                    first = opLayout
                    firstPending = true
                } else {
                    add(rowOp(bytes, opLayout, rows: &rows))
                }
                seen += 1
            case 2:
                do {
                    origin = try PushOrigin.decodeField(ByteReader(bytes, from: i, end: valueEnd))
                } catch {
                    return nil
                }
            default:
                break
            }
        }
        first.opCount = seen
        first.hasOrigin = origin != nil
        if !(firstPending && leavesOutPreparedRow && first.isPreparedUpsert) {
            if firstPending { add(rowOp(bytes, first, rows: &rows)) }
            // Taken as the ops' array even when there is none (then emptied below).
            if !tookSpare { swap(&ops, &spare) }
        }
        if count < ops.count { ops.removeSubrange(count...) }
        layout = first
        let changes = RowChanges(ops, origin: origin)
        return kind == .changed ? .changed(changes) : .localWrite(changes)
    }

    /// Checks one row op message (`bytes[start ..< end]`) as ``rowOp(_:from:end:layout:rows:)``
    /// reads it — kind 1 (upsert) or 2 (delete), an ID of valid UTF-8 — and puts where its ID
    /// and JSON lie, and whether it is an upsert, into `layout`; false where the general decoder
    /// must decide (as for ``decodeRowChanges(kind:payload:rows:spare:layout:leavesOutPreparedRow:)``).
    private static func rowOpLayout(_ bytes: UnsafeRawBufferPointer, from start: Int, end: Int, layout: inout RowChangesLayout) -> Bool {
        var i = start
        var op: UInt64 = 0
        var hasID = false
        while i < end {
            guard let tag = varint(bytes, at: &i, end: end), let length = varint(bytes, at: &i, end: end),
                  length <= UInt64(end - i) else { return false }
            let valueEnd = i + Int(length)
            switch tag {
            case 1:
                // The general decoder reads a varint from the value and ignores what follows it.
                var at = i
                guard let kind = varint(bytes, at: &at, end: valueEnd) else { return false }
                op = kind
            case 2:
                let value = UnsafeRawBufferPointer(rebasing: bytes[i..<valueEnd])
                guard String.isASCII(value) || String(validating: value, as: UTF8.self) != nil else { return false }
                hasID = true
                layout.idStart = i
                layout.idCount = value.count
            case 3:
                layout.jsonStart = i
                layout.jsonCount = valueEnd - i
            default:
                break
            }
            i = valueEnd
        }
        guard hasID else { return false }
        switch op {
        case 1:
            layout.firstIsUpsert = true
            return true
        case 2:
            // A delete's JSON field, if any, is not part of the op.
            layout.jsonCount = 0
            return true
        default: return false
        }
    }

    /// The op of a row op message that ``rowOpLayout(_:from:end:layout:)`` accepted and wrote
    /// `layout` for: the row's ID and JSON (from `rows`; none: an empty `Data`), or the deleted ID.
    private static func rowOp(_ bytes: UnsafeRawBufferPointer, _ layout: RowChangesLayout, rows: inout RowJSONBlocks) -> RowChanges.Op {
        let id = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[layout.idStart..<(layout.idStart + layout.idCount)]), as: UTF8.self)
        guard layout.firstIsUpsert else { return .delete(id: id) }
        return .upsert(Row(id: id, json: rows.data(UnsafeRawBufferPointer(rebasing: bytes[layout.jsonStart..<(layout.jsonStart + layout.jsonCount)]))))
    }

    /// The LEB128 varint at `bytes[i]` (before `end`), advancing `i`; nil when it is truncated
    /// or over 64 bits (where ``ByteReader/varint(_:)`` throws).
    @inline(__always)
    private static func varint(_ bytes: UnsafeRawBufferPointer, at i: inout Int, end: Int) -> UInt64? {
        guard i < end else { return nil }
        let first = bytes[i]
        i += 1
        if first < 0x80 { return UInt64(first) }
        var result = UInt64(first & 0x7F)
        var shift: UInt64 = 7
        while i < end {
            let b = bytes[i]
            i += 1
            if shift == 63 && b > 1 { return nil }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { return nil }
        }
        return nil
    }
}

/// Where the first op of a row change (``Event/decodeRowChanges(kind:payload:rows:spare:layout:leavesOutPreparedRow:)``)
/// lies in the bytes it was decoded from: offsets from the first byte of the buffer the
/// payload is in (for a log record, the record's own bytes), counts in bytes. The log tools'
/// reading thread copies the op's ID and JSON from there (``FoldChunk/append(_:bytes:layout:)``)
/// instead of reaching them through the decoded `String` and `Data` (docs/performance.md,
/// "Issue 8 speed round 8 (reading side)").
struct RowChangesLayout {
    /// The number of ops; 0 for none (the other fields are then 0 and false).
    var opCount = 0
    /// Whether the change has a push origin.
    var hasOrigin = false
    /// Whether the first op is an upsert (else a delete).
    var firstIsUpsert = false
    /// The first op's ID: its UTF-8 bytes, exactly the decoded `String`'s.
    var idStart = 0
    var idCount = 0
    /// The first op's JSON (an upsert's; a delete's count is 0): exactly the decoded row's
    /// `json`, 0 bytes when the op has none.
    var jsonStart = 0
    var jsonCount = 0

    /// Whether the log tools fold this change from the bytes the reading thread prepares
    /// (``FoldChunk/Upsert``, ``Fold/applyLocalUpsert(_:bytes:record:slot:tables:_:state:in:)``)
    /// and never read its ops: one op, an upsert, no push origin (what ``Fold/apply(lent:to:in:)``
    /// folds through ``Fold/upsert(_:state:prefix:in:)`` alone), a row of at most
    /// ``FoldChunk/preparedRowLimit`` bytes of JSON.
    var isPreparedUpsert: Bool { opCount == 1 && firstIsUpsert && !hasOrigin && jsonCount <= FoldChunk.preparedRowLimit }
}
