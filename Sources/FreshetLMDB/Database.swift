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

extension Database {
    /// A handle that names a database of no environment, for in-memory tables that stand in
    /// for an environment's (Freshet's `MemoryTables`, when no store is open to lend its
    /// handles). `index` tells the handles of one set apart; passing such a handle to a
    /// ``Transaction`` is a programmer error (LMDB would read it as an unrelated `MDB_dbi`).
    package init(detachedNamed name: String, index: UInt32) {
        self.init(dbi: MDB_dbi(index), name: name)
    }
}
