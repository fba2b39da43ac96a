internal import CLMDB

/// A handle to a named database inside an ``Environment`` (an `MDB_dbi`).
///
/// Handles are opened once when the store opens and stay valid until the environment
/// closes; they are never closed one by one (LMDB doc on `mdb_dbi_close`).
package struct Database: Sendable, Hashable {
    let dbi: MDB_dbi
    /// The database's name inside the environment.
    package let name: String
}
