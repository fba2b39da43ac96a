import Foundation
@testable import Freshet

/// A small store with every kind of page a real one has — several pages of rows, a row on
/// overflow pages, SyncMarks, local writes, pending and rolled-back mutations — for the
/// damaged-file tests to break.
enum DamagedStoreFixture {
    static let pendingIDs = [
        MutationID(rawValue: UUID(uuidString: "00000000-0000-0000-0000-0000000000A1") ?? UUID()),
        MutationID(rawValue: UUID(uuidString: "00000000-0000-0000-0000-0000000000A2") ?? UUID()),
    ]
    static let rolledBackID = MutationID(rawValue: UUID(uuidString: "00000000-0000-0000-0000-0000000000B1") ?? UUID())

    /// Creates the store in `directory` and closes it.
    static func build(in directory: URL) async throws {
        var configuration = Configuration.test()
        configuration.sendsMutations = false
        let store = try Store(directory: directory, configuration: configuration, dependencies: .test())
        defer { store.close() }
        for pageIndex in 0..<4 {
            let rows = (0..<60).map { row("p\(pageIndex)-\($0)", "pokemon number \(pageIndex * 60 + $0) with a longer name") }
            try await store.append(page(pageIndex, isLast: pageIndex == 3, rows, next: "c\(pageIndex + 1)"), to: "pokemon")
        }
        let big = Row(id: "big", json: Data(("{\"blob\":\"" + String(repeating: "x", count: 10_000) + "\"}").utf8))
        try await store.append(replace([big, row("small")]), to: "big")
        try await store.localWrite("favourites", [.upsert(row("25", "pikachu")), .upsert(row("133", "eevee"))])
        try await store.append(replace(rows("1", "2", "3")), to: "todos")
        for (n, id) in (pendingIDs + [rolledBackID]).enumerated() {
            let mutation = Mutation(name: "editTodo", ops: [.upsert(row("\(n + 1)", "edit \(n)"), in: "todos")], request: .init(method: .put, path: "/todos/\(n + 1)"))
            try await store.append(.mutationProposed(Event.MutationProposed(id: id, mutation: mutation)), to: "todos")
        }
        try await store.append(.mutationRolledBack(Event.MutationRolledBack(id: rolledBackID, status: 422, reason: "refused")), to: "todos")
    }
}
