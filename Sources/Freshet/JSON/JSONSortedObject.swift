/// Collects the fields of one JSON object in any order and writes them sorted by key
/// (UTF-8 bytes, as `JSONSerialization`'s `.sortedKeys` orders ASCII keys), for output whose
/// key order must not depend on the order the code adds fields (`freshet dump --json`).
///
/// ```swift
/// var o = JSONSortedObject()
/// o.field("lsn") { $0.number(7) }
/// o.field("kind") { $0.string("fetched") }
/// o.write(into: &writer)   // {"kind":"fetched","lsn":7}
/// ```
package struct JSONSortedObject {
    private var values = JSONWriter(capacity: 512)
    private var fields: [(key: String, range: Range<Int>)] = []

    package init() {
        fields.reserveCapacity(16)
    }

    /// Adds a field; a key added twice is written twice (callers add each key once).
    package mutating func field(_ key: String, _ value: (inout JSONWriter) -> Void) {
        let start = values.bytes.count
        value(&values)
        fields.append((key, start..<values.bytes.count))
    }
    package mutating func field(_ key: String, string v: String) { field(key) { $0.string(v) } }
    package mutating func field(_ key: String, string v: String?) { if let v { field(key) { $0.string(v) } } }
    package mutating func field(_ key: String, number v: some BinaryInteger) { field(key) { $0.number(v) } }
    package mutating func field(_ key: String, bool v: Bool) { field(key) { $0.bool(v) } }

    /// Writes `{…}` with the fields sorted by key.
    package func write(into writer: inout JSONWriter) {
        let sorted = fields.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        writer.raw(CollectionOfOne(UInt8(ascii: "{")))
        for (n, field) in sorted.enumerated() {
            if n > 0 { writer.raw(CollectionOfOne(UInt8(ascii: ","))) }
            writer.string(field.key)
            writer.raw(CollectionOfOne(UInt8(ascii: ":")))
            writer.raw(values.bytes[field.range])
        }
        writer.raw(CollectionOfOne(UInt8(ascii: "}")))
    }
}
