import Foundation
import Freshet

extension QueryDefinition {
    /// An optimistic op showing `value` as row `id` of this query's collection (replacing the
    /// row with that ID in place, or appended), for ``MutationDefinition/optimistic``. The row
    /// is `value` encoded as JSON with sorted keys (``Freshet/Row/init(id:encoding:)``).
    /// - Throws: what `JSONEncoder` throws for `value`.
    public func upsert(_ value: some Encodable, id: String) throws -> Mutation.Op {
        .upsert(try Row(id: id, encoding: value), in: collection)
    }

    /// An optimistic op hiding row `id` of this query's collection.
    public func delete(id: String) -> Mutation.Op {
        .delete(id: id, in: collection)
    }
}
