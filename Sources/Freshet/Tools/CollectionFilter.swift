/// Which collections a tool looks at: all, one by name, or every name with a prefix.
///
/// On the command line (`--collection VALUE`): a value ending in `/` (`pokemon/`) or `*`
/// (`pokemon*`, the `*` dropped) is a prefix; any other value is an exact name, so
/// `--collection pokemon` never matches `pokemon-detail`.
public enum CollectionFilter: Sendable, Hashable {
    case all
    case name(String)
    case prefix(String)

    /// Parses a `--collection` value as described on the type.
    public init(_ value: String) {
        if value.hasSuffix("*") {
            self = .prefix(String(value.dropLast()))
        } else if value.hasSuffix("/") {
            self = .prefix(value)
        } else {
            self = .name(value)
        }
    }

    /// Checks a collection name (or `--collection` value) typed on the command line as the
    /// store checks a name it writes (1 to 200 bytes of UTF-8 without control characters), so
    /// every tool refuses `""` with the words `import` uses for a line.
    /// - Throws: ``StoreError/invalidName``.
    public static func checkName(_ name: String) throws(StoreError) {
        try Keys.validate(collection: name)
    }

    /// Whether `collection` is selected.
    public func matches(_ collection: String) -> Bool {
        switch self {
        case .all: true
        case .name(let name): collection == name
        case .prefix(let prefix): collection.hasPrefix(prefix)
        }
    }
}
