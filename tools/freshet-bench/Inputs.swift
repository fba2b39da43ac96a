import Foundation
import ProcessSupport

/// The real PokeAPI data the workloads use, from `fixtures/` (gzip-compressed, minified, keys
/// sorted). The parent decompresses them once into the work directory; children read them.
///
/// - the list page (W2): a PokeAPI `pokemon` list page with the first 1,000 of the 1,351
///   entries of `pokemon/index.json.gz`, in PokeAPI's shape (`count`, `next`, `previous`,
///   `results`), each row's bytes exactly as in the fixture;
/// - the detail documents (W2b): the 20 largest `pokemon/<id>.json.gz` documents,
///   6,501,262 bytes in all (IDs in ``detailIDs``);
/// - list rows (W1, W3, W4, W5, W7): the entries of the index, `{"name":…,"url":…}`.
struct Inputs: Sendable {
    /// The 20 largest pokemon detail documents of fixtures/ (by decompressed size, largest first).
    static let detailIDs = [151, 150, 113, 149, 143, 80, 35, 122, 115, 112, 36, 6, 39, 94, 108, 79, 9, 111, 31, 40]
    static let pageRows = 1000

    let page: [UInt8]
    let documents: [(id: Int, body: [UInt8])]
    /// The index's entries: each row's ID (its `name`) and bytes.
    let listRows: [(id: String, json: [UInt8])]

    var documentBytes: Int { documents.reduce(0) { $0 + $1.body.count } }

    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Decompresses what the workloads need into `directory`/inputs.
    static func prepare(in directory: String) throws {
        let fixtures = repositoryRoot.appendingPathComponent("fixtures/pokeapi/api/v2/pokemon").path
        let dir = directory + "/inputs"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try gunzip(fixtures + "/index.json.gz", to: dir + "/index.json")
        for id in detailIDs { try gunzip(fixtures + "/\(id).json.gz", to: dir + "/\(id).json") }
        // The 1,000-row page: the index's first 1,000 entries, byte for byte.
        let index = try read(dir + "/index.json")
        let rows = try index.withUnsafeBufferPointer { b throws(JSONSlicer.Failure) in
            try JSONSlicer.pageRows(b, rowsKey: "results", idField: "name").prefix(pageRows).map { Array(b[$0.range]) }
        }
        var page = Array(#"{"count":1000,"next":null,"previous":null,"results":["#.utf8)
        for (i, row) in rows.enumerated() {
            if i > 0 { page.append(UInt8(ascii: ",")) }
            page += row
        }
        page += Array("]}".utf8)
        try Data(page).write(to: URL(fileURLWithPath: dir + "/page.json"))
    }

    static func load(from directory: String) throws -> Inputs {
        let dir = directory + "/inputs"
        let index = try read(dir + "/index.json")
        let listRows = try index.withUnsafeBufferPointer { b throws(JSONSlicer.Failure) in
            try JSONSlicer.pageRows(b, rowsKey: "results", idField: "name").map { (id: $0.id, json: Array(b[$0.range])) }
        }
        return Inputs(
            page: try read(dir + "/page.json"),
            documents: try detailIDs.map { (id: $0, body: try read(dir + "/\($0).json")) },
            listRows: listRows
        )
    }

    static func read(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    private static func gunzip(_ source: String, to destination: String) throws {
        let end = try SpawnedProcess(["/usr/bin/env", "gzip", "-dc", source], standardOutput: .file(destination)).wait()
        guard end == .exited(0) else { throw BenchError("gzip -dc \(source) ended with \(end)") }
    }

    /// `count` rows made of the index's real rows, cycled, with IDs `0` … `count-1`.
    func cycledRows(_ count: Int) -> [(id: String, json: [UInt8])] {
        (0..<count).map { (id: String($0), json: listRows[$0 % listRows.count].json) }
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
