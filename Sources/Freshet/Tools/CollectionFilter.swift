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

    /// Whether `collection` is selected.
    public func matches(_ collection: String) -> Bool {
        switch self {
        case .all: true
        case .name(let name): collection == name
        case .prefix(let prefix): collection.hasPrefix(prefix)
        }
    }
}
