/// A decoded row with its ID: what ``Snapshot/decodeIdentifiedRows(_:using:)`` returns, so a
/// list keeps the row ID (a provisional ID of a pending mutation included) even when the
/// value type has no `id` of its own. `Identifiable` by ``id``, for SwiftUI's `ForEach`.
public struct IdentifiedRow<Value>: Identifiable {
    /// The row's ID in its collection (``Row/id``).
    public let id: String
    /// The row's JSON decoded as `Value`.
    public let value: Value

    public init(id: String, value: Value) {
        self.id = id
        self.value = value
    }
}

extension IdentifiedRow: Sendable where Value: Sendable {}
extension IdentifiedRow: Equatable where Value: Equatable {}
extension IdentifiedRow: Hashable where Value: Hashable {}
