import Foundation

/// Turns a response body into rows, using the platform's JSON parser (`JSONSerialization`).
/// Each row is re-serialized with sorted keys and no insignificant white space, so the same
/// server row always has the same bytes (values unchanged).
enum RowExtraction {
    struct Failure: Error, CustomStringConvertible {
        var description: String { reason }
        var reason: String
    }

    struct Result {
        var rows: [Row]
        /// The value of the paging key, when the resource pages by a body field.
        var next: String?
    }

    static func extract(_ body: Data, for resource: Resource) throws(Failure) -> Result {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
        } catch {
            let start = String(decoding: body.prefix(40), as: UTF8.self)
            throw Failure(reason: "body is not JSON (\(body.count) bytes, starting \(start.debugDescription))")
        }
        var next: String?
        if case .nextField(let key) = resource.paging {
            guard let object = root as? [String: Any] else { throw Failure(reason: "body is not a JSON object, so it has no \(key.debugDescription)") }
            switch object[key] {
            case nil, is NSNull: next = nil
            case let s as String: next = s
            default: throw Failure(reason: "\(key.debugDescription) is neither a string nor null")
            }
        }
        let elements: [Any]
        switch resource.rows {
        case .array(let key):
            guard let object = root as? [String: Any] else { throw Failure(reason: "body is not a JSON object with \(key.debugDescription)") }
            guard let array = object[key] as? [Any] else { throw Failure(reason: "body has no array under \(key.debugDescription)") }
            elements = array
        case .rootArray:
            guard let array = root as? [Any] else { throw Failure(reason: "body is not a JSON array") }
            elements = array
        case .document:
            elements = [root]
        }
        var rows: [Row] = []
        rows.reserveCapacity(elements.count)
        for (i, element) in elements.enumerated() {
            guard let object = element as? [String: Any] else { throw Failure(reason: "row \(i) is not a JSON object") }
            let id = try identity(of: object, resource.id, index: i)
            let json: Data
            do {
                json = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            } catch {
                throw Failure(reason: "row \(i) cannot be serialized: \(error.localizedDescription)")
            }
            rows.append(Row(id: id, json: json))
        }
        return Result(rows: rows, next: next)
    }

    private static func identity(of object: [String: Any], _ rule: Resource.RowIdentity, index: Int) throws(Failure) -> String {
        switch rule {
        case .field(let key):
            switch object[key] {
            case let s as String where !s.isEmpty: return s
            case let n as Int: return String(n)
            default: throw Failure(reason: "row \(index) has no string or integer \(key.debugDescription) to use as its ID")
            }
        case .lastPathComponent(let key):
            guard let s = object[key] as? String else { throw Failure(reason: "row \(index) has no string \(key.debugDescription) to take its ID from") }
            guard let last = s.split(separator: "/").last(where: { !$0.isEmpty }) else {
                throw Failure(reason: "row \(index): \(key.debugDescription) = \(s.debugDescription) has no path component")
            }
            return String(last)
        }
    }
}
