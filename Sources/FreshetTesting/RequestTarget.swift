import Foundation

/// A request target as a route compares it: the percent-decoded path and the query items,
/// sorted so that their order does not matter.
struct RequestTarget: Sendable, Hashable, CustomStringConvertible {
    /// One `name=value` query item, percent-decoded; `value` is `nil` for a bare `name`.
    struct Item: Sendable, Hashable, Comparable {
        var name: String
        var value: String?

        /// By name, then value, a bare `name` before any `name=value`.
        static func < (lhs: Item, rhs: Item) -> Bool {
            if lhs.name != rhs.name { return lhs.name < rhs.name }
            switch (lhs.value, rhs.value) {
            case (nil, nil), (_?, nil): return false
            case (nil, _?): return true
            case let (left?, right?): return left < right
            }
        }
    }

    /// The path, percent-decoded; `"/"` when empty.
    var path: String
    /// The query items, sorted by name then value; repeated items are kept.
    var items: [Item]
    /// The target as written or sent, for messages.
    var description: String

    /// Parses `"/path?name=value&..."` as written in a route.
    init(pattern: String) {
        let (path, query) = Self.split(pattern)
        self.init(path: path, query: query, description: pattern)
    }

    /// The target of the request URL `url` (its host and scheme are ignored).
    init(url: URL) {
        let path = url.path(percentEncoded: true)
        let query = url.query(percentEncoded: true)
        let description = query.map { "\(path)?\($0)" } ?? path
        self.init(path: path, query: query, description: description.isEmpty ? "/" : description)
    }

    private init(path: String, query: String?, description: String) {
        let decoded = Self.decode(path)
        self.path = decoded.isEmpty ? "/" : decoded
        self.items = (query ?? "")
            .split(separator: "&", omittingEmptySubsequences: true)
            .map { part in
                guard let equals = part.firstIndex(of: "=") else { return Item(name: Self.decode(part), value: nil) }
                return Item(name: Self.decode(part[..<equals]), value: Self.decode(part[part.index(after: equals)...]))
            }
            .sorted()
        self.description = description
    }

    /// Equal when the paths are equal and the query items are the same in any order; the
    /// spelling in ``description`` does not count.
    static func == (lhs: RequestTarget, rhs: RequestTarget) -> Bool {
        lhs.path == rhs.path && lhs.items == rhs.items
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(path)
        hasher.combine(items)
    }

    private static func split(_ target: String) -> (path: String, query: String?) {
        guard let question = target.firstIndex(of: "?") else { return (target, nil) }
        return (String(target[..<question]), String(target[target.index(after: question)...]))
    }

    /// `text` with percent escapes decoded; unchanged when it holds an invalid escape.
    private static func decode(_ text: some StringProtocol) -> String {
        let text = String(text)
        return text.removingPercentEncoding ?? text
    }
}
