import FreshetLMDB

extension Store {
    /// Reads `collection`'s SyncMark alone — one LMDB `get`, no rows decoded — for decisions
    /// that need only the mark (is it fresh, which validators to send). Nil when no event has
    /// touched the collection.
    /// - Throws: ``StoreError/invalidName``, ``StoreError/closed``, or
    ///   ``StoreError/corruptRecord`` when the stored mark is malformed.
    func syncMark(_ collection: String) throws(StoreError) -> SyncMark? {
        try checkOpen()
        try Keys.validate(collection: collection)
        do {
            return try env.read { txn in try state.syncMark(collection, in: txn) }
        } catch {
            throw StoreError(error, doing: "reading the SyncMark of \(collection)")
        }
    }
}
