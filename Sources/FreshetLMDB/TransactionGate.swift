import Foundation

/// A readers–writer lock over an environment's transactions: every transaction holds it
/// shared, and changing the map size holds it exclusive, because LMDB allows
/// `mdb_env_set_mapsize` only "if no transactions are active in this process"
/// (<http://www.lmdb.tech/doc/group__mdb.html#gaa2506ec8dab3d969b0e609cd82e619e5>).
///
/// A `pthread_rwlock_t` with the platform's default (reader-preferring on glibc), so a
/// thread may take it shared again while it holds it (a read inside a read).
final class TransactionGate: @unchecked Sendable {
    // `@unchecked`: the lock is only touched through pthread calls, which synchronize.
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        let rc = pthread_rwlock_init(lock, nil)
        precondition(rc == 0, "pthread_rwlock_init failed: \(rc)")
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    func shared<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    /// Called when ``exclusive(_:)`` finds the gate held and is about to wait (tests use it
    /// to know that a close is waiting for a transaction). Set before the gate is shared.
    var onExclusiveWait: (@Sendable () -> Void)?

    func exclusive<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        if pthread_rwlock_trywrlock(lock) != 0 {
            onExclusiveWait?()
            pthread_rwlock_wrlock(lock)
        }
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
