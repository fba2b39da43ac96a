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
    static func decodeRowChanges(kind: EventKind, payload: ByteReader, rows: inout RowJSONBlocks, spare: inout [RowChanges.Op],
                                 layout: inout RowChangesLayout) -> Event? {
        let bytes = payload.bytes
        var i = payload.offset
        let end = payload.end
        var ops: [RowChanges.Op] = []
        swap(&ops, &spare)
        var count = 0
        var origin: PushOrigin?
        var first = RowChangesLayout()
        while i < end {
            guard let tag = varint(bytes, at: &i, end: end), let length = varint(bytes, at: &i, end: end),
                  length <= UInt64(end - i) else { return nil }
            let valueEnd = i + Int(length)
            defer { i = valueEnd }
            switch tag {
            case 1:
                var opLayout = RowChangesLayout()
                guard let op = rowOp(bytes, from: i, end: valueEnd, rows: &rows, layout: &opLayout) else { return nil }
                if count == 0 { first = opLayout }
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
        if count < ops.count { ops.removeSubrange(count...) }
        first.opCount = count
        first.hasOrigin = origin != nil
        layout = first
        let changes = RowChanges(ops, origin: origin)
        return kind == .changed ? .changed(changes) : .localWrite(changes)
    }

    /// One row op message (`bytes[start ..< end]`): kind 1 (upsert) with the row's ID and JSON,
    /// or kind 2 (delete) with the ID; nil as for ``decodeRowChanges(kind:payload:rows:spare:layout:)``.
    /// Where its ID and JSON lie, and whether it is an upsert, go into `layout`.
    private static func rowOp(_ bytes: UnsafeRawBufferPointer, from start: Int, end: Int, rows: inout RowJSONBlocks,
                              layout: inout RowChangesLayout) -> RowChanges.Op? {
        var i = start
        var op: UInt64 = 0
        var id: String?
        var json: UnsafeRawBufferPointer?
        while i < end {
            guard let tag = varint(bytes, at: &i, end: end), let length = varint(bytes, at: &i, end: end),
                  length <= UInt64(end - i) else { return nil }
            let valueEnd = i + Int(length)
            let value = UnsafeRawBufferPointer(rebasing: bytes[i..<valueEnd])
            switch tag {
            case 1:
                // The general decoder reads a varint from the value and ignores what follows it.
                var at = i
                guard let kind = varint(bytes, at: &at, end: valueEnd) else { return nil }
                op = kind
            case 2:
                guard let s = String.validatingUTF8(value) else { return nil }
                id = s
                layout.idStart = i
                layout.idCount = value.count
            case 3:
                json = value
                layout.jsonStart = i
                layout.jsonCount = value.count
            default:
                break
            }
            i = valueEnd
        }
        guard let id else { return nil }
        switch op {
        case 1:
            layout.firstIsUpsert = true
            return .upsert(Row(id: id, json: json.map { rows.data($0) } ?? Data()))
        case 2:
            // A delete's JSON field, if any, is not part of the op.
            layout.jsonCount = 0
            return .delete(id: id)
        default: return nil
        }
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

/// Where the first op of a row change (``Event/decodeRowChanges(kind:payload:rows:spare:layout:)``)
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
}
