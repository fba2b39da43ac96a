import Foundation

/// Rows the app hands the store (local writes, pushes, optimistic ops) are checked and stored
/// in the canonical form the fold gives fetched rows (docs/log-format.md §6.2), so identical
/// content is identical bytes whichever way a row entered, and the log never holds a row that
/// `replay --json` or `import` cannot read back.
extension Store {
    /// `event` with every app-supplied row rewritten canonically; other events unchanged
    /// (fetched and confirmed rows come from ``RowExtraction``, canonical already).
    /// - Throws: ``StoreError/invalidEvent`` naming the row when its JSON is not exactly one
    ///   JSON value (not JSON, truncated, empty, or two values).
    static func canonicalRows(_ event: Event, in collection: String) throws(StoreError) -> Event {
        let kind = event.kind.name
        func canonical(_ ops: [Event.RowChanges.Op]) throws(StoreError) -> [Event.RowChanges.Op] {
            var out = ops
            for (i, op) in ops.enumerated() {
                if case .upsert(let row) = op { out[i] = .upsert(try canonicalRow(row, in: collection, kind: kind)) }
            }
            return out
        }
        switch event {
        case .changed(var c):
            c.ops = try canonical(c.ops)
            return .changed(c)
        case .localWrite(var c):
            c.ops = try canonical(c.ops)
            return .localWrite(c)
        case .mutationProposed(var p):
            for (i, op) in p.mutation.ops.enumerated() {
                if case .upsert(let row) = op.change {
                    p.mutation.ops[i].change = .upsert(try canonicalRow(row, in: op.collection, kind: kind))
                }
            }
            return .mutationProposed(p)
        default:
            return event
        }
    }

    private static func canonicalRow(_ row: Row, in collection: String, kind: String) throws(StoreError) -> Row {
        do throws(JSONError) {
            guard let json = try JSONWriter.canonicalForm(of: row.json) else { return row }
            return Row(id: row.id, json: json)
        } catch {
            throw StoreError(.invalidEvent, "\(kind) for \(collection): row \(row.id.debugDescription) is not one JSON value (\(error))")
        }
    }
}
