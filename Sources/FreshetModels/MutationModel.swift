import Foundation
import Freshet
import Observation
import Synchronization

/// An `@Observable` mutation a SwiftUI view holds: `mutate(_:)` proposes a
/// ``MutationDefinition``'s mutation for an input, and the model shows how the last call is
/// doing — TanStack Query's `useMutation` (`status`, `variables`, `data`, `error`, `reset`).
///
/// ```swift
/// @MainActor let toggle = MutationModel(Mutations.toggle, store: store)
/// toggle.mutate(todo)                  // the optimistic row shows in every QueryModel of "todos" at once
/// // toggle.status: .pending until the server answers, then .success or .error
/// ```
///
/// The optimistic rows are not kept here: the store folds the `mutationProposed` event into
/// the projection, so every ``QueryModel`` of the collections it touches shows them, and
/// drops or replaces them on rollback or confirmation. The mutation is durable once
/// ``status`` is ``Status/pending`` with a ``mutationID``; releasing the model, or a caller
/// that stops waiting, leaves it queued (it is sent, retried and resolved by the store).
///
/// Only the last call shows: a `mutate` while another is pending replaces the state shown
/// (both mutations are sent, in order).
@MainActor
@Observable
public final class MutationModel<Input: Sendable> {
    /// Where the last call is (TanStack's `status`).
    public enum Status: Sendable, Hashable {
        /// No call yet, or ``reset()`` since.
        case idle
        /// Proposed (or being proposed) and not answered yet: offline, or the request is in
        /// flight or waiting for a retry.
        case pending
        /// The server confirmed it: ``outcome`` says how.
        case success
        /// It could not be proposed, the server rejected it (rolled back), or the store closed
        /// while it waited: ``error`` says which.
        case error
    }

    @ObservationIgnored public let definition: MutationDefinition<Input>
    @ObservationIgnored public let store: Store

    public private(set) var status: Status = .idle
    /// The input of the last call (TanStack's `variables`); nil before the first and after ``reset()``.
    public private(set) var variables: Input?
    /// The last call's mutation ID, once its `mutationProposed` event is committed.
    public private(set) var mutationID: MutationID?
    /// How the server confirmed the last call, when ``status`` is ``Status/success``.
    public private(set) var outcome: MutationOutcome?
    /// Why the last call failed, when ``status`` is ``Status/error``: a ``Freshet/MutationError``
    /// (`invalidMutation` when it could not be built or proposed, `rejected` and
    /// `dependencyRolledBack` after a rollback, `storage` when the store closed first).
    public private(set) var error: MutationError?

    /// Which call the state shows; a later call or a reset makes earlier results stale.
    @ObservationIgnored private var ticket: UInt64 = 0
    /// The task waiting for the shown call's outcome; cancelled when the model goes.
    @ObservationIgnored private let wait = WaitSlot()

    public init(_ definition: MutationDefinition<Input>, store: Store) {
        self.definition = definition
        self.store = store
    }

    deinit {
        // Only the wait ends: the mutation stays queued in the store.
        wait.replace(with: nil)
    }

    public var isIdle: Bool { status == .idle }
    public var isPending: Bool { status == .pending }
    public var isSuccess: Bool { status == .success }
    public var isError: Bool { status == .error }

    /// Proposes the mutation for `input` and returns at once; ``status`` follows it.
    public func mutate(_ input: Input) {
        _ = start(input)
    }

    /// Proposes the mutation for `input` and waits for the server's answer (TanStack's
    /// `mutateAsync`). ``status`` follows it as with ``mutate(_:)``.
    /// - Throws: ``Freshet/MutationError``: what ``Freshet/Store/mutate(_:)`` and
    ///   ``Freshet/PendingMutation/outcome()`` throw. `cancelled` when the calling task is
    ///   cancelled while waiting: the mutation stays queued and ``status`` stays pending.
    @discardableResult
    public func mutateAsync(_ input: Input) async throws(MutationError) -> MutationOutcome {
        let (ticket, proposal) = start(input)
        let pending = try await proposal.value.get()
        let result: Result<MutationOutcome, MutationError>
        do throws(MutationError) {
            result = .success(try await pending.outcome())
        } catch {
            result = .failure(error)
        }
        // The state shows the answer before this returns (the model's own wait may come later).
        finish(result, ticket: ticket)
        return try result.get()
    }

    /// Forgets the last call's state (back to ``Status/idle``); a pending mutation stays queued.
    public func reset() {
        ticket &+= 1
        wait.replace(with: nil)
        status = .idle
        variables = nil
        mutationID = nil
        outcome = nil
        error = nil
    }

    /// Shows a new call and proposes it in a task of its own (not cancelled with the caller:
    /// the proposal is committed either way).
    private func start(_ input: Input) -> (ticket: UInt64, proposal: Task<Result<PendingMutation, MutationError>, Never>) {
        ticket &+= 1
        let ticket = self.ticket
        wait.replace(with: nil)
        status = .pending
        variables = input
        mutationID = nil
        outcome = nil
        error = nil
        let store = self.store
        let definition = self.definition
        return (ticket, Task { [weak self] in
            do throws(MutationError) {
                let pending = try await store.mutate(try definition.mutation(for: input))
                self?.track(pending, ticket: ticket)
                return .success(pending)
            } catch {
                self?.finish(.failure(error), ticket: ticket)
                return .failure(error)
            }
        })
    }

    private func track(_ pending: PendingMutation, ticket: UInt64) {
        guard ticket == self.ticket else { return }
        mutationID = pending.id
        wait.replace(with: Task { [weak self] in
            let result: Result<MutationOutcome, MutationError>
            do throws(MutationError) {
                result = .success(try await pending.outcome())
            } catch {
                result = .failure(error)
            }
            self?.finish(result, ticket: ticket)
        })
    }

    /// Shows how call `ticket` ended, unless a later call or a reset replaced it, or it is
    /// shown already (``mutateAsync(_:)`` and the model's own wait both report it).
    private func finish(_ result: Result<MutationOutcome, MutationError>, ticket: UInt64) {
        guard ticket == self.ticket, status == .pending else { return }
        switch result {
        case .success(let outcome):
            self.outcome = outcome
            status = .success
        case .failure(let error) where error.code == .cancelled:
            // Only the wait ended (a newer call or the model going); the mutation is queued.
            break
        case .failure(let error):
            self.error = error
            status = .error
        }
    }
}

/// The one task a ``MutationModel`` waits with, cancellable from its nonisolated `deinit`.
final class WaitSlot: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Cancels the task held, if any, and holds `next`.
    func replace(with next: Task<Void, Never>?) {
        task.withLock { current in
            current?.cancel()
            current = next
        }
    }
}
