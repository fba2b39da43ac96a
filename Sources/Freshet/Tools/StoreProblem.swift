/// One thing `verify` (or a replay) found wrong, named by where it is: the database, the
/// collection, the row ID and the LSN concerned, when each is known.
///
/// `description` is one line: `rows · pokemon · row 25 · LSN 7: stored value differs from replay`.
public struct StoreProblem: Sendable, Hashable, CustomStringConvertible {
    /// The named LMDB database (`log`, `rows`, `rowIndex`, `marks`, `meta`, `pending`,
    /// `mutations`, `idMap`, `confirmed`; docs/log-format.md).
    public var database: String
    public var collection: String?
    public var rowID: String?
    /// The record concerned: the unreadable or missing record, or the last record that wrote
    /// the damaged value according to the replay.
    public var lsn: LSN?
    public var message: String

    public init(database: String, collection: String? = nil, rowID: String? = nil, lsn: LSN? = nil, message: String) {
        self.database = database
        self.collection = collection
        self.rowID = rowID
        self.lsn = lsn
        self.message = message
    }

    /// Collection, row ID and message go through ``TerminalEscaping`` (a server or the log
    /// file chose them): the line stays one line and drives no terminal.
    public var description: String {
        var parts = [database]
        if let collection { parts.append(TerminalEscaping.escaped(collection)) }
        if let rowID { parts.append("row \(TerminalEscaping.escaped(rowID))") }
        if let lsn { parts.append("LSN \(lsn)") }
        return parts.joined(separator: " · ") + ": " + TerminalEscaping.escaped(message)
    }
}
