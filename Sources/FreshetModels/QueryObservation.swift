import Foundation
import Freshet

/// The task that feeds one query model: reads the store's snapshots of the declaration's
/// collection (``Freshet/Store/observe(_:)-(Resource)``), decodes the rows that changed off the
/// main actor (``RowDecodingCache``), reports schema drift to the store once, and hands each
/// result to the model on the main actor.
///
/// The task holds the model only weakly (through `deliver`), so releasing the model releases
/// it; the model's `deinit` calls ``cancel()``, which ends the store's observation at once
/// (the hub drops the observer). An emission that arrives after the model is gone is decoded
/// and dropped. ``InfiniteQueryModel`` uses it through the ``QueryModel`` it wraps: both show
/// decoded rows of one collection and differ only in how they fetch.
final class QueryObservation: Sendable {
    /// What the loop hands to the model.
    enum Update<Value: Decodable & Sendable>: Sendable {
        /// One snapshot, with its rows decoded (only the changed ones anew).
        case snapshot(Snapshot, RowDecodingCache<Value>.Decoded)
        /// Schema drift was reported to the store: the collection is invalidated and refetched.
        case driftInvalidated(LSN)
        /// The drift invalidation or the observation failed (the store is unreadable), or the
        /// store closed (code `closed`).
        case failed(StoreError)
    }

    let task: Task<Void, Never>

    init<Value>(store: Store, definition: QueryDefinition<Value>, deliver: @escaping @MainActor @Sendable (Update<Value>) -> Void) {
        let observation = store.observe(definition.resource)
        task = Task.detached(priority: .userInitiated) {
            var cache = RowDecodingCache(definition)
            var reportedDrift = false
            do {
                for try await snapshot in observation {
                    let decoded = cache.update(with: snapshot)
                    // Schema drift (docs/swiftui.md): rows that no longer decode mark the
                    // collection stale once per model, so the store refetches it (the server's
                    // current rows may fit the current type). Rows that still fail after that
                    // stay reported but trigger nothing more: no refetch loop.
                    if !decoded.newFailures.isEmpty, !reportedDrift {
                        reportedDrift = true
                        let reason = Self.driftReason(decoded.errors, type: Value.self)
                        do throws(StoreError) {
                            let lsn = try await store.invalidate(definition.collection, reason: reason)
                            await deliver(.driftInvalidated(lsn))
                        } catch {
                            await deliver(.failed(error))
                        }
                    }
                    await deliver(.snapshot(snapshot, decoded))
                }
                // The store's observations end without an error only when it closes
                // (Store.close()); a cancelled task is the model going away, told nothing.
                if !Task.isCancelled { await deliver(.failed(Self.closed(store))) }
            } catch let error as StoreError {
                await deliver(.failed(error))
            } catch {
                await deliver(.failed(StoreError(.storage, "observing \(definition.collection) failed: \(error)")))
            }
        }
    }

    /// Stops observing: the store's observer is removed before this returns when the task is
    /// waiting for a snapshot, or when it next asks for one otherwise.
    func cancel() {
        task.cancel()
    }

    /// What a model shows when the store it observes closes: rows kept, no more snapshots.
    static func closed(_ store: Store) -> StoreError {
        StoreError(.closed, "the store at \(store.directory.path) closed: the model keeps the rows it shows and receives no more snapshots")
    }

    /// `rows 3, 7 of todos do not decode as Todo (schema drift)`, the `invalidated` event's
    /// reason (shown by `freshet why`).
    static func driftReason(_ errors: [RowDecodingError], type: Any.Type) -> String {
        let ids = errors.prefix(5).map(\.rowID.debugDescription).joined(separator: ", ")
        let more = errors.count > 5 ? " and \(errors.count - 5) more" : ""
        let collection = errors.first?.collection ?? ""
        return "row\(errors.count == 1 ? "" : "s") \(ids)\(more) of \(collection) do\(errors.count == 1 ? "es" : "") not decode as \(type) (schema drift)"
    }
}
