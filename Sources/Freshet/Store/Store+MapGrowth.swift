import FreshetLMDB

extension Store {
    /// Runs `body` (which writes the store) and, when it fails because the map is full
    /// (LMDB `MDB_MAP_FULL`), grows the map and runs it again, until it succeeds or the map
    /// has reached ``Configuration/maxMapSize``.
    func withMapGrowth<R>(_ body: () throws -> R) throws -> R {
        try Self.withMapGrowth(env: env, limit: configuration.maxMapSize, body)
    }

    static func withMapGrowth<R>(env: Environment, limit: Int, _ body: () throws -> R) throws -> R {
        while true {
            do {
                return try body()
            } catch where isMapFull(error) {
                guard try grow(env: env, limit: limit) else { throw error }
            }
        }
    }

    /// Doubles the map (at most to `limit`); false when it is at the limit already.
    static func grow(env: Environment, limit: Int) throws -> Bool {
        let current = try env.info().mapSize
        guard current < limit else { return false }
        let doubled = current > limit / 2 ? limit : current * 2
        try env.setMapSize(doubled)
        return true
    }

    static func isMapFull(_ error: any Error) -> Bool {
        switch error {
        case LMDBError.mapFull: true
        case let e as StoreError: e.code == .mapFull
        default: false
        }
    }
}
