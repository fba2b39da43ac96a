/// The header fields of a request or a response: an ordered list of `(name, value)` field
/// lines, looked up case-insensitively.
///
/// ```swift
/// var headers: HTTPHeaders = ["Accept": "application/json"]
/// headers.add(name: "If-None-Match", value: #""v1""#)
/// headers["accept"]                  // "application/json"
/// headers.values(for: "if-none-match") // [#""v1""#]
/// ```
///
/// Shape: `fields` keeps every field line in the order it was added, with its name spelled as
/// given. Several lines may share a name; that is how HTTP carries a list (RFC 9110 §5.3), and
/// ``combinedValue(for:)`` joins them with `", "` the way a recipient may. Names are compared
/// case-insensitively in ASCII (RFC 9110 §5.1). Values are kept exactly; no whitespace is
/// trimmed and nothing is validated, so a value containing CR or LF is a programmer error that
/// the transport will not repair.
///
/// Equality and hashing follow RFC 9110 §5.3: two header lists are equal when, for every name
/// (compared case-insensitively), they hold the same values in the same order. The order
/// between fields of different names is not significant.
public struct HTTPHeaders: Sendable {
    /// One field line: a name and its value, as sent or received.
    public struct Field: Sendable, Hashable, CustomStringConvertible {
        /// The field name, spelled as it was added or received. Compare with
        /// ``HTTPHeaders`` lookups, which ignore ASCII case.
        public var name: String
        /// The field value, exactly as it was added or received.
        public var value: String

        /// A field line with `name` and `value`.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }

        /// `"Name: value"`, the field line as it appears in HTTP/1.1.
        public var description: String { "\(name): \(value)" }
    }

    /// Every field line, in order.
    public private(set) var fields: [Field]

    /// An empty header list.
    public init() {
        fields = []
    }

    /// A header list holding `fields` in order.
    public init(_ fields: [Field]) {
        self.fields = fields
    }

    /// The number of field lines (not of distinct names).
    public var count: Int { fields.count }

    /// Whether there are no field lines.
    public var isEmpty: Bool { fields.isEmpty }

    /// The value of the first field line named `name` (ASCII case-insensitive), or `nil`.
    ///
    /// Setting a value behaves like ``set(name:value:)``; setting `nil` behaves like
    /// ``remove(name:)``.
    public subscript(name: String) -> String? {
        get { fields.first { FieldSyntax.equalsIgnoringASCIICase($0.name, name) }?.value }
        set {
            if let newValue {
                set(name: name, value: newValue)
            } else {
                remove(name: name)
            }
        }
    }

    /// The values of every field line named `name` (ASCII case-insensitive), in order; empty
    /// when there is none. Values are not split at commas.
    public func values(for name: String) -> [String] {
        fields.filter { FieldSyntax.equalsIgnoringASCIICase($0.name, name) }.map(\.value)
    }

    /// The values of every field line named `name` joined with `", "`, which is what a
    /// recipient may do with a list-valued field (RFC 9110 §5.3); `nil` when there is none.
    /// Not meaningful for `Set-Cookie`, whose values cannot be joined (RFC 9110 §5.3).
    public func combinedValue(for name: String) -> String? {
        let values = values(for: name)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// Whether at least one field line is named `name` (ASCII case-insensitive).
    public func contains(_ name: String) -> Bool {
        fields.contains { FieldSyntax.equalsIgnoringASCIICase($0.name, name) }
    }

    /// Appends a field line, keeping any existing lines with the same name.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Makes `value` the only value for `name`: the first existing line with that name
    /// (ASCII case-insensitive) keeps its position and takes `name`'s spelling and `value`,
    /// later ones are removed; when there is none, the line is appended.
    public mutating func set(name: String, value: String) {
        guard let first = fields.firstIndex(where: { FieldSyntax.equalsIgnoringASCIICase($0.name, name) }) else {
            add(name: name, value: value)
            return
        }
        fields[first] = Field(name: name, value: value)
        var index = fields.index(after: first)
        while index < fields.endIndex {
            if FieldSyntax.equalsIgnoringASCIICase(fields[index].name, name) {
                fields.remove(at: index)
            } else {
                index = fields.index(after: index)
            }
        }
    }

    /// Removes every field line named `name` (ASCII case-insensitive); does nothing when
    /// there is none.
    public mutating func remove(name: String) {
        fields.removeAll { FieldSyntax.equalsIgnoringASCIICase($0.name, name) }
    }

    /// The fields grouped by lowercased name (names in ascending order), keeping each name's
    /// values in order: the form that RFC 9110 §5.3 says carries the meaning.
    private var canonicalFields: [Field] {
        fields.enumerated()
            .map { (offset: $0.offset, field: Field(name: FieldSyntax.asciiLowercased($0.element.name), value: $0.element.value)) }
            .sorted { ($0.field.name, $0.offset) < ($1.field.name, $1.offset) }
            .map(\.field)
    }
}

extension HTTPHeaders: Hashable {
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.count == rhs.count && lhs.canonicalFields == rhs.canonicalFields
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(canonicalFields)
    }
}

extension HTTPHeaders: ExpressibleByDictionaryLiteral {
    /// A header list holding the literal's pairs in the order written. Unlike a `Dictionary`
    /// literal, a name may appear more than once; each pair becomes one field line.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }
}

extension HTTPHeaders: Sequence {
    /// Iterates over the field lines in order.
    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }
}

extension HTTPHeaders: CustomStringConvertible {
    /// One `"Name: value"` line per field, in order, separated by newlines.
    public var description: String {
        fields.map(\.description).joined(separator: "\n")
    }
}
