import Foundation

/// A parsed JSON object being read by `freshet import`: typed field access whose errors name
/// the line and the field (`line 7: fetched.response.status must be a whole number`).
struct JSONObject {
    let fields: [String: Any]
    let line: Int
    let path: String

    func error(_ message: String) -> ToolError {
        ToolError(.invalidLine, "line \(line): \(path.isEmpty ? "" : path + ": ")\(message)")
    }

    private func value(_ key: String) throws(ToolError) -> Any {
        guard let v = fields[key], !(v is NSNull) else { throw error("missing field \(key)") }
        return v
    }

    func string(_ key: String) throws(ToolError) -> String {
        guard let s = try value(key) as? String else { throw error("\(key) must be a string") }
        return s
    }

    func optionalString(_ key: String) throws(ToolError) -> String? {
        fields[key] == nil || fields[key] is NSNull ? nil : try string(key)
    }

    func int(_ key: String) throws(ToolError) -> Int {
        // A JSON number without a fraction; Foundation's exact bridging refuses 1.5.
        let v = try value(key)
        guard let i = v as? Int else {
            // A whole number too large for 64 bits (such as 18446744073709551615) is out of range, not a fraction.
            if !(v is Bool), let n = v as? NSNumber, n.doubleValue.rounded() == n.doubleValue, n.doubleValue.isFinite {
                throw error("\(key) \(n) is out of range (at most \(Int.max))")
            }
            throw error("\(key) must be a whole number")
        }
        return i
    }

    func optionalInt(_ key: String) throws(ToolError) -> Int? {
        fields[key] == nil || fields[key] is NSNull ? nil : try int(key)
    }

    func optionalUInt(_ key: String) throws(ToolError) -> UInt64? {
        guard let i = try optionalInt(key) else { return nil }
        guard i >= 0 else { throw error("\(key) must not be negative") }
        return UInt64(i)
    }

    func bool(_ key: String) throws(ToolError) -> Bool {
        guard let b = try value(key) as? Bool else { throw error("\(key) must be true or false") }
        return b
    }

    func optionalBool(_ key: String) throws(ToolError) -> Bool? {
        fields[key] == nil || fields[key] is NSNull ? nil : try bool(key)
    }

    func object(_ key: String) throws(ToolError) -> JSONObject {
        guard let o = try value(key) as? [String: Any] else { throw error("\(key) must be an object") }
        return JSONObject(fields: o, line: line, path: path.isEmpty ? key : path + "." + key)
    }

    func objects(_ key: String) throws(ToolError) -> [JSONObject] {
        guard let a = try value(key) as? [Any] else { throw error("\(key) must be an array") }
        var result: [JSONObject] = []
        for (i, item) in a.enumerated() {
            guard let o = item as? [String: Any] else { throw error("\(key)[\(i)] must be an object") }
            result.append(JSONObject(fields: o, line: line, path: (path.isEmpty ? key : path + "." + key) + "[\(i)]"))
        }
        return result
    }

    /// An array of whole numbers from 0 (LSNs).
    func uints(_ key: String) throws(ToolError) -> [UInt64] {
        guard let a = try value(key) as? [Any] else { throw error("\(key) must be an array") }
        var result: [UInt64] = []
        for (i, item) in a.enumerated() {
            guard !(item is Bool), let n = item as? Int, n >= 0 else { throw error("\(key)[\(i)] must be a whole number from 0") }
            result.append(UInt64(n))
        }
        return result
    }

    func strings(_ key: String) throws(ToolError) -> [String] {
        guard let a = try value(key) as? [Any] else { throw error("\(key) must be an array") }
        var result: [String] = []
        for item in a {
            guard let s = item as? String else { throw error("\(key) must hold strings") }
            result.append(s)
        }
        return result
    }

    func stringMap(_ key: String) throws(ToolError) -> [(String, String)] {
        guard let o = try value(key) as? [String: Any] else { throw error("\(key) must be an object") }
        var result: [(String, String)] = []
        for (k, v) in o {
            guard let s = v as? String else { throw error("\(key).\(k) must be a string") }
            result.append((k, s))
        }
        return result
    }

    /// `key` as UTF-8 text, or `keyBase64` as Base64; nil when neither is there.
    func optionalBytes(_ key: String) throws(ToolError) -> Data? {
        if let text = try optionalString(key) { return Data(text.utf8) }
        guard let encoded = try optionalString(key + "Base64") else { return nil }
        guard let data = Data(base64Encoded: encoded) else { throw error("\(key)Base64 is not Base64") }
        return data
    }
}
