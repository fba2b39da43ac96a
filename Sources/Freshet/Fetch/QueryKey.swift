import Foundation

/// A query key: a name and typed parameters, such as `pokemon-species` with `id: 25` or
/// `comments` with `postId: 3` — TanStack Query's `['comments', { postId: 3 }]`.
///
/// One declaration serves any number of keys, each with its own collection (rows and
/// SyncMark). The collection name is normalized, parameters sorted by name, so the same
/// parameters in any order name the same collection: `comments{postId=3}`. Strings are
/// percent-escaped for `%`, `,`, `=`, `{` and `}`.
public struct QueryKey: Sendable, Hashable, CustomStringConvertible {
    /// One parameter value.
    public enum Value: Sendable, Hashable, CustomStringConvertible, ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByBooleanLiteral {
        case int(Int)
        case string(String)
        case bool(Bool)

        public init(integerLiteral value: Int) { self = .int(value) }
        public init(stringLiteral value: String) { self = .string(value) }
        public init(booleanLiteral value: Bool) { self = .bool(value) }

        /// The value as written in a collection name and a URL: decimal, `true`/`false`, or the string.
        public var description: String {
            switch self {
            case .int(let v): String(v)
            case .string(let v): v
            case .bool(let v): v ? "true" : "false"
            }
        }
    }

    /// The query's name: a collection name of its own when the key has no parameters.
    public var name: String
    /// The parameters, by name.
    public var parameters: [String: Value]

    public init(_ name: String, _ parameters: [String: Value] = [:]) {
        self.name = name
        self.parameters = parameters
    }

    /// The normalized collection name: `name`, or `name{a=1,b=x}` with the parameters sorted.
    public var collection: String {
        guard !parameters.isEmpty else { return name }
        let pairs = parameters.sorted { $0.key < $1.key }.map { "\(Self.escape($0.key))=\(Self.escape($0.value.description))" }
        return name + "{" + pairs.joined(separator: ",") + "}"
    }

    public var description: String { collection }

    /// Whether `collection` is a key of the query named `name` (with any parameters).
    public static func collection(_ collection: String, isKeyOf name: String) -> Bool {
        collection == name || (collection.hasPrefix(name + "{") && collection.hasSuffix("}"))
    }

    private static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "%": out += "%25"
            case ",": out += "%2C"
            case "=": out += "%3D"
            case "{": out += "%7B"
            case "}": out += "%7D"
            default: out.append(c)
            }
        }
        return out
    }
}

extension Resource {
    /// A resource for one key of a keyed query: the collection is ``QueryKey/collection``; each
    /// `{name}` in `path` is replaced by that parameter's value (percent-encoded as a path
    /// segment; a value of `.` or `..` is written `%2E` / `%2E%2E`, never as a dot-segment
    /// RFC 3986 §5.2.4 would remove), and the other parameters are sent as query items (sorted by name).
    ///
    /// ```swift
    /// func comments(postId: Int) -> Resource {
    ///     .keyed(QueryKey("comments", ["postId": .int(postId)]), path: "/comments", rows: .rootArray, id: .field("id"))
    /// }   // GET /comments?postId=3 into collection "comments{postId=3}"
    /// ```
    public static func keyed(_ key: QueryKey, path: String, query: [String: String] = [:], rows: RowLocation, id: RowIdentity,
                             paging: Paging = .none, freshness: FreshnessPolicy? = nil) -> Resource {
        var path = path
        var query = query
        for (name, value) in key.parameters {
            let placeholder = "{\(name)}"
            if path.contains(placeholder) {
                var segment = value.description.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? value.description
                // "." and ".." are dot-segments that URL resolution removes (RFC 3986 §5.2.4):
                // the request would go to this path's parent. As data they are written %2E.
                if segment == "." || segment == ".." { segment = segment.replacingOccurrences(of: ".", with: "%2E") }
                path = path.replacingOccurrences(of: placeholder, with: segment)
            } else {
                query[name] = value.description
            }
        }
        return Resource(collection: key.collection, path: path, query: query, rows: rows, id: id, paging: paging, freshness: freshness)
    }
}
