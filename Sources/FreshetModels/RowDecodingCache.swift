import Foundation
import Freshet

/// The decoded rows of one observed collection, keyed by row ID, so each snapshot decodes only
/// the rows that changed: a row whose ID and stored bytes are those of the previous snapshot
/// keeps its decoded value (or its decoding error) without being decoded again.
///
/// Rows are compared by their stored bytes (``Freshet/Row/json``, the canonical row form of
/// docs/log-format.md "Row JSON": the same server row always has the same bytes), so a
/// refetch of identical rows, a 304, a pending mutation on another row or a SyncMark-only
/// change decode nothing. Owned by one observation loop (not shared, not `Sendable`).
struct RowDecodingCache<Value: Decodable & Sendable> {
    /// One snapshot's rows as the model shows them.
    struct Decoded: Sendable {
        /// The rows that decode, in the snapshot's order.
        var rows: [IdentifiedRow<Value>]
        /// The rows that do not, in the snapshot's order.
        var errors: [RowDecodingError]
        /// Whether ``rows`` differ from the previous call's: another ID order, or a row decoded anew.
        var rowsChanged: Bool
        /// Row IDs whose failure was not in the previous call's (a row that newly fails to decode).
        var newFailures: [String]
        /// How many rows this call decoded (with `decode` or `upgrade`): the changed ones only.
        var decodeCount: Int
    }

    private enum Entry {
        case value(Value)
        case failure(RowDecodingError)
    }

    private let definition: QueryDefinition<Value>
    private var entries: [String: (json: Data, entry: Entry)] = [:]
    /// The IDs of the rows shown after the previous call, in order.
    private var shownIDs: [String] = []
    private var isFirst = true

    init(_ definition: QueryDefinition<Value>) {
        self.definition = definition
    }

    /// Decodes what changed in `snapshot`'s rows since the previous call and returns them all.
    mutating func update(with snapshot: Snapshot) -> Decoded {
        var next: [String: (json: Data, entry: Entry)] = [:]
        next.reserveCapacity(snapshot.rows.count)
        var rows: [IdentifiedRow<Value>] = []
        rows.reserveCapacity(snapshot.rows.count)
        var errors: [RowDecodingError] = []
        var newFailures: [String] = []
        var decodeCount = 0
        var rowsChanged = isFirst
        for row in snapshot.rows {
            let entry: Entry
            if let old = entries[row.id], old.json == row.json {
                entry = old.entry
            } else {
                entry = decode(row, in: snapshot.collection)
                decodeCount += 1
                if case .value = entry { rowsChanged = true }
                if case .failure = entry { newFailures.append(row.id) }
            }
            switch entry {
            case .value(let value): rows.append(IdentifiedRow(id: row.id, value: value))
            case .failure(let error): errors.append(error)
            }
            next[row.id] = (row.json, entry)
        }
        let ids = rows.map(\.id)
        if ids != shownIDs { rowsChanged = true }
        entries = next
        shownIDs = ids
        isFirst = false
        return Decoded(rows: rows, errors: errors, rowsChanged: rowsChanged, newFailures: newFailures, decodeCount: decodeCount)
    }

    private func decode(_ row: Row, in collection: String) -> Entry {
        do {
            return .value(try definition.decode(row))
        } catch {
            let failure = RowDecodingError(collection: collection, rowID: row.id, type: Value.self, underlying: error)
            guard let upgrade = definition.upgrade else { return .failure(failure) }
            do {
                return .value(try upgrade(row))
            } catch {
                // The upgrade's own error is secondary: the report names why the current type refused the row.
                return .failure(failure)
            }
        }
    }
}
