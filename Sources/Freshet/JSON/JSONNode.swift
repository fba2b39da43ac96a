/// One value in a ``JSONTape``: its kind and where its bytes are in the input.
///
/// Containers are followed on the tape by their children (an object by key, value, key,
/// value …), so `next` — the index just past the whole subtree — skips a value in O(1).
package struct JSONNode: Sendable, Hashable {
    package enum Kind: UInt8, Sendable {
        case object, array, string, number, `true`, `false`, null
    }

    package var kind: Kind
    /// Strings: the text holds a backslash escape. Numbers: written as an integer (no `.`/`e`).
    /// Objects and arrays: their bytes are already in the canonical row form (no white space,
    /// keys strictly ascending, only canonical escapes), so they can be copied as they are.
    package var flag: Bool
    /// Objects: the number of members; arrays: the number of elements; otherwise 0.
    package var count: UInt32
    /// Strings: the offset just after the opening quote; other values: their first byte.
    package var start: UInt32
    /// Strings: the offset of the closing quote; other values: one past their last byte.
    package var end: UInt32
    /// The index on the tape just past this value and everything inside it.
    package var next: UInt32
}
