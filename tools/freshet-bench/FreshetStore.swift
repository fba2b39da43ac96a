import Foundation
import Freshet
import FreshetHTTP
import Synchronization

/// Freshet through its public API: `refresh` for fetched pages and documents (through an
/// in-memory transport, so the whole path from response bytes to committed rows is measured),
/// `localWrite` for small writes, `append` for setup, `snapshot` for reading.
final class FreshetStore: BenchStore {
    static let baseURL = "http://bench.invalid"
    let store: Store
    private let transport: MemoryTransport

    init(directory: String, durability: Durability) throws {
        let mode: Configuration.Durability = switch durability {
        case .full: .full
        case .relaxed: .relaxed
        case .none: .none
        }
        var configuration = Configuration(durability: mode, baseURL: URL(string: Self.baseURL))
        configuration.mapSize = 8 << 30
        configuration.sendsMutations = false
        transport = MemoryTransport()
        store = try Store(directory: URL(fileURLWithPath: directory), configuration: configuration,
                          dependencies: Dependencies(now: { Date() }, transport: transport))
    }

    func stage(path: String, body: [UInt8]) { transport.set(path, Data(body)) }

    func write(collection: String, id: String, json: [UInt8]) async throws {
        try await store.localWrite(collection, [.upsert(Row(id: id, json: Data(json)))])
    }

    func foldPage(collection: String, path: String, body: [UInt8]) async throws {
        try await store.refresh(.list(collection, path: path, id: .field("name")))
    }

    func foldDocument(collection: String, path: String, body: [UInt8]) async throws {
        try await store.refresh(.document(collection, path: path))
    }

    func load(_ batches: [(collection: String, rows: [(id: String, json: [UInt8])])], as placement: LoadPlacement) async throws {
        let placement: Event.Fetched.Placement = switch placement {
        case .replace: .replace
        case .upsert: .upsert
        }
        let events = batches.map { b -> (collection: String, event: Event) in
            let rows = b.rows.map { Row(id: $0.id, json: Data($0.json)) }
            return (b.collection, .fetched(Event.Fetched(placement: placement, rows: rows, response: ResponseInfo(url: Self.baseURL + "/" + b.collection, status: 200))))
        }
        try await store.append(events)
    }

    func rows(_ collection: String) throws -> [(id: String, json: [UInt8])] {
        try store.snapshot(collection).rows.map { (id: $0.id, json: Array($0.json)) }
    }

    var groupSizes: [Int: Int]? { store.groupCommitSizes }

    func close() { store.close() }
}

/// Answers GETs from memory: 200 with the staged JSON body, 404 for anything else.
final class MemoryTransport: HTTPTransport {
    private let routes = Mutex<[String: Data]>([:])

    func set(_ path: String, _ body: Data) { routes.withLock { $0[path] = body } }

    func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        guard let body = routes.withLock({ $0[request.url.path] }) else {
            return HTTPResponse(status: 404, url: request.url)
        }
        return HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: body, url: request.url)
    }
}
