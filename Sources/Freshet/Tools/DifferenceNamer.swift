import Foundation

/// Turns a difference between a stored and a replayed database entry into a ``StoreProblem``
/// that names the collection, row ID and LSN, decoding keys as docs/log-format.md lays them out.
struct DifferenceNamer {
    /// The replayed SyncMarks, by collection: they say which LSN last wrote a collection.
    let replayedMarks: [String: SyncMark]

    /// - Parameter override: the message to use instead of the one `stored` and `replayed`
    ///   imply (a failed key lookup); what names the key (page and index, mutation, meta key) is
    ///   still appended.
    func name(database: String, key: [UInt8], stored: [UInt8]?, replayed: [UInt8]?, message override: String? = nil) -> StoreProblem {
        let what: String = if let override { override } else { switch (stored, replayed) {
        case (nil, _): "missing: the replay has this entry, the store does not"
        case (_, nil): "stored, but the replay has no such entry"
        default: "stored value differs from the replay"
        } }
        var problem = StoreProblem(database: database, message: what)
        switch database {
        case "rows":
            if let (collection, rest) = Self.split(key) {
                problem.collection = collection
                problem.lsn = replayedMarks[collection]?.rowsLSN
                if rest.count == 8 {
                    let position = rest.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                    problem.message += " (page \(position >> 32), index \(position & 0xFFFF_FFFF))"
                }
                problem.rowID = Self.rowID(replayed) ?? Self.rowID(stored)
            }
        case "rowIndex", "idMap", "confirmed":
            if let (collection, rest) = Self.split(key) {
                problem.collection = collection
                problem.rowID = String(decoding: rest, as: UTF8.self)
                problem.lsn = replayedMarks[collection]?.rowsLSN
                if database == "confirmed", let v = replayed ?? stored, v.count == 9 {
                    problem.lsn = LSN(v[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
                }
            }
        case "marks":
            let collection = String(decoding: key, as: UTF8.self)
            problem.collection = collection
            problem.lsn = replayedMarks[collection]?.lastLSN
        case "pending":
            if key.count == 8 { problem.lsn = LSN(key.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }) }
        case "mutations":
            if let v = replayed ?? stored, v.count == 9 { problem.lsn = LSN(v[1..<9].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }) }
            if key.count == 16 {
                let uuid = key.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
                problem.message += " (mutation \(MutationID(uuid)))"
            }
        case "meta":
            let name = String(decoding: key, as: UTF8.self)
            problem.message += " (\(name))"
            if override == nil, key == MetaKey.lastLSN, let s = stored, let r = replayed, s.count == 8, r.count == 8 {
                let storedLSN = LSN(s.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
                let replayedLSN = LSN(r.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
                problem.lsn = replayedLSN
                problem.message = storedLSN > replayedLSN
                    ? "the store says LSNs were assigned up to \(storedLSN), the log ends at \(replayedLSN): records after \(replayedLSN) are missing"
                    : "the store says its last LSN is \(storedLSN), the log goes on to \(replayedLSN)"
            }
        case "log":
            if key.count == 8 { problem.lsn = LSN(key.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }) }
        default:
            break
        }
        return problem
    }

    /// Splits a key into its collection name (2-byte big-endian length ‖ UTF-8) and the rest.
    static func split(_ key: [UInt8]) -> (String, [UInt8])? {
        guard key.count >= 2 else { return nil }
        let n = Int(key[0]) << 8 | Int(key[1])
        guard key.count >= 2 + n else { return nil }
        return (String(decoding: key[2..<2 + n], as: UTF8.self), Array(key[(2 + n)...]))
    }

    /// The ID of an encoded row (varint length ‖ ID ‖ JSON), or nil when it does not decode.
    static func rowID(_ value: [UInt8]?) -> String? {
        guard let value else { return nil }
        do {
            return try value.withUnsafeBytes { try MaterializedState.decodeRow($0).id }
        } catch {
            return nil
        }
    }
}
