import Foundation

/// The data of one `change` event, as Freshet's Server-Sent Events source reads it
/// (docs/realtime.md, "The change message"):
///
/// ```json
/// {"collection":"todos","op":"upsert","rows":[{"id":7,"title":"…"}]}
/// {"collection":"todos","op":"delete","ids":["7"]}
/// ```
///
/// `collection` is the server's name for the rows (the key of
/// ``EventSource/Configuration/resources``). Upserted rows are read exactly as a fetch of the
/// collection's ``Resource`` reads them: the same ID rule and the same canonical row bytes, so
/// a pushed row equals the fetched one.
struct ChangeMessage {
    var collection: String
    var op: Op

    enum Op {
        /// The rows' bytes, still to be read with the collection's resource.
        case upsert(Data)
        case delete([String])
    }

    struct Malformed: Error {
        var reason: String
    }

    /// Reads the envelope: `collection`, `op` and, for a delete, the IDs (strings or integers).
    static func parse(_ data: String) throws(Malformed) -> ChangeMessage {
        let bytes = Data(data.utf8)
        let object: [String: Any]
        do {
            guard let o = try JSONSerialization.jsonObject(with: bytes) as? [String: Any] else {
                throw Malformed(reason: "the data is not a JSON object")
            }
            object = o
        } catch let error as Malformed {
            throw error
        } catch {
            throw Malformed(reason: "the data is not JSON (\(bytes.count) bytes)")
        }
        guard let collection = object["collection"] as? String else { throw Malformed(reason: "the change has no \"collection\" string") }
        switch object["op"] as? String {
        case "upsert":
            guard object["rows"] is [Any] else { throw Malformed(reason: "an upsert of \(collection) has no \"rows\" array") }
            return ChangeMessage(collection: collection, op: .upsert(bytes))
        case "delete":
            guard let ids = object["ids"] as? [Any] else { throw Malformed(reason: "a delete of \(collection) has no \"ids\" array") }
            var result: [String] = []
            for id in ids {
                if let s = id as? String {
                    result.append(s)
                } else if let n = id as? NSNumber, String(cString: n.objCType) != "c", let i = Int(exactly: n.doubleValue) {
                    // `objCType` "c" is a JSON true or false (Foundation bridges them as NSNumber; `is Bool` holds for 1 too).
                    result.append(String(i))
                } else {
                    throw Malformed(reason: "a delete of \(collection) has an ID that is neither a string nor a whole number")
                }
            }
            return ChangeMessage(collection: collection, op: .delete(result))
        case let other:
            throw Malformed(reason: "the change's \"op\" is \(other.map { $0.debugDescription } ?? "missing"), not \"upsert\" or \"delete\"")
        }
    }

    /// The row operations for the store, reading upserted rows with `resource`.
    func ops(reading resource: Resource) throws(Malformed) -> [Event.RowChanges.Op] {
        switch op {
        case .delete(let ids): return ids.map { .delete(id: $0) }
        case .upsert(let body):
            let rowsResource = Resource(collection: resource.collection, path: resource.path, rows: .array(at: "rows"), id: resource.id)
            do {
                return try RowExtraction.extract(body, for: rowsResource).rows.map { .upsert($0) }
            } catch {
                throw Malformed(reason: "an upsert of \(collection): \(error.reason)")
            }
        }
    }
}
