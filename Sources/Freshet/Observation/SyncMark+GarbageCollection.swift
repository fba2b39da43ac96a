extension SyncMark {
    /// Whether the collection ever went to the server: a fetch attempt (successful or not)
    /// or a validation is recorded. A collection without one holds only local writes (or
    /// pushed, invalidated or mutated rows): nothing a refetch could bring back, so garbage
    /// collection never evicts it (docs/queries.md, "Garbage collection").
    var wasFetched: Bool {
        fetchedLSN != nil || validatedAt != nil || lastAttemptAt != nil
    }
}
