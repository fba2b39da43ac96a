// freshet-fold-bench: times the JSON-heavy workloads of issue 9 (W2, W2b, W3) on the real
// fixtures, through the public Store API with a scripted transport (no network).
//
//     swift run -c release freshet-fold-bench [ROUNDS] [FIXTURES_DIR]
//
// Prints one line per workload: the median and the minimum of ROUNDS rounds (default 15).
// Not a test: it asserts nothing about time. tools/freshet-bench is the side-by-side benchmark.
import Foundation
import ProcessSupport
import Freshet
import FreshetHTTP
import FreshetTesting

let arguments = CommandLine.arguments
let rounds = arguments.count > 1 ? Int(arguments[1]) ?? 15 : 15
let fixtures = URL(fileURLWithPath: arguments.count > 2 ? arguments[2] : "fixtures")
let only = ProcessInfo.processInfo.environment["ONLY"]

/// A fixture, decompressed; cached under the temporary directory so that runs under
/// valgrind (which does not follow child processes well) need no gzip.
func gunzip(_ path: String) -> Data {
    let cache = FileManager.default.temporaryDirectory.appendingPathComponent("fold-bench-cache").appendingPathComponent(path)
    if let data = FileManager.default.contents(atPath: cache.path) { return data }
    let data = runGzip(path)
    try? FileManager.default.createDirectory(at: cache.deletingLastPathComponent(), withIntermediateDirectories: true)
    _ = FileManager.default.createFile(atPath: cache.path, contents: data)
    return data
}

func runGzip(_ path: String) -> Data {
    do {
        let process = try SpawnedProcess(["/bin/gzip", "-dc", fixtures.appendingPathComponent(path).path], standardOutput: .pipe)
        let data = try process.readOutput()
        _ = process.wait()
        return data
    } catch {
        fatalError("cannot run gzip: \(error)")
    }
}

func temporaryDirectory() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("fold-bench-\(UUID().uuidString)", isDirectory: true)
}

func openStore(_ directory: URL, _ transport: ScriptedTransport) throws -> Store {
    var configuration = Configuration(durability: .full, baseURL: URL(string: "http://bench.invalid"))
    configuration.defaultFreshness = .maxAge(.seconds(300))
    return try Store(directory: directory, configuration: configuration,
                     dependencies: Dependencies(now: { Date() }, transport: transport))
}

func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18 }

/// With CPU=1 in the environment every sample is the process's CPU time (all threads) instead
/// of wall-clock time: steadier on a shared machine.
let useCPU = ProcessInfo.processInfo.environment["CPU"] != nil
func processCPU() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}
/// Runs `body`, returning its wall-clock or CPU seconds (see `useCPU`).
func sample(_ body: () throws -> Void) rethrows -> Double {
    let c0 = processCPU()
    let elapsed = try ContinuousClock().measure(body)
    return useCPU ? processCPU() - c0 : seconds(elapsed)
}
func sample(_ body: () async throws -> Void) async rethrows -> Double {
    let c0 = processCPU()
    let elapsed = try await ContinuousClock().measure(body)
    return useCPU ? processCPU() - c0 : seconds(elapsed)
}

func report(_ name: String, _ samples: [Double], unit: String, scale: Double = 1000, per: Double? = nil) {
    let sorted = samples.sorted()
    let median = sorted[sorted.count / 2]
    if let per {
        print("\(name): median \(String(format: "%.2f", per / median / 1e6)) MB/s (\(String(format: "%.2f", median * 1000)) ms), best \(String(format: "%.2f", per / sorted[0] / 1e6)) MB/s, \(samples.count) rounds")
    } else {
        print("\(name): median \(String(format: "%.2f", median * scale)) \(unit), best \(String(format: "%.2f", sorted[0] * scale)) \(unit), \(samples.count) rounds")
    }
}

// W2: fold one fetched 1,000-row list page (PokeAPI list rows) into a fresh store.
let index = gunzip("pokeapi/api/v2/pokemon/index.json.gz")
let listRoot = try JSONSerialization.jsonObject(with: index) as! [String: Any]
let results = (listRoot["results"] as! [[String: Any]]).prefix(1000)
let page = try JSONSerialization.data(withJSONObject: ["count": results.count, "next": NSNull(), "previous": NSNull(), "results": Array(results)] as [String: Any])
// W2b: 20 real detail documents.
let details = (1...20).map { gunzip("pokeapi/api/v2/pokemon/\($0).json.gz") }
let detailBytes = Double(details.reduce(0) { $0 + $1.count })
// W3: 10,000 rows (JSONPlaceholder photos twice, the second copy with shifted IDs).
struct Photo: Decodable { var albumId: Int; var id: Int; var title: String; var url: String; var thumbnailUrl: String }

func runW2() async throws -> Double {
    let transport = ScriptedTransport()
    transport.on("/list", reply: .status(200, headers: ["Content-Type": "application/json"], body: page))
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = try openStore(directory, transport)
    defer { store.close() }
    let resource = Resource.list("pokemon", path: "/list", paging: .none)
    let elapsed = try await sample { _ = try await store.refresh(resource) }
    let count = try store.snapshot("pokemon").rows.count
    precondition(count == 1000, "W2 folded \(count) rows")
    return elapsed
}

func runW2b() async throws -> Double {
    let transport = ScriptedTransport()
    for (i, d) in details.enumerated() { transport.on("/pokemon/\(i + 1)", reply: .status(200, headers: ["Content-Type": "application/json"], body: d)) }
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = try openStore(directory, transport)
    defer { store.close() }
    let elapsed = try await sample {
        for i in 1...20 { _ = try await store.refresh(.document("pokemon/\(i)", path: "/pokemon/\(i)")) }
    }
    return elapsed
}

let w3Directory = temporaryDirectory()
func prepareW3() async throws {
    // Loaded here, so that ONLY=W2b measures W2b's memory alone.
    let database = try JSONSerialization.jsonObject(with: gunzip("jsonplaceholder/data.json.gz")) as! [String: Any]
    let photos = database["photos"] as! [[String: Any]]
    let tenThousand = photos + photos.map { var p = $0; p["id"] = (p["id"] as! Int) + 5000; return p }
    let photoBody = try JSONSerialization.data(withJSONObject: tenThousand)
    let transport = ScriptedTransport()
    transport.on("/photos", reply: .status(200, headers: ["Content-Type": "application/json"], body: photoBody))
    let store = try openStore(w3Directory, transport)
    _ = try await store.refresh(Resource(collection: "photos", path: "/photos", rows: .rootArray, id: .field("id")))
    store.close()
}

func runW3() throws -> Double {
    var count = 0
    let elapsed = try sample {
        let store = try openStore(w3Directory, ScriptedTransport())
        defer { store.close() }
        count = try store.snapshot("photos").decodeRows(Photo.self).count
    }
    precondition(count == 10_000)
    return elapsed
}

/// W3's parts: reading the snapshot, decoding its rows with RowDecoder (the default) and with
/// Foundation's JSONDecoder (forced by giving the decoder a userInfo entry).
func runW3Parts() throws -> (snapshot: Double, rowDecoder: Double, jsonDecoder: Double) {
    let store = try openStore(w3Directory, ScriptedTransport())
    defer { store.close() }
    var snapshot: Snapshot?
    let read = try sample { snapshot = try store.snapshot("photos") }
    guard let snapshot else { fatalError("no snapshot") }
    var decoded = 0
    let fast = try sample { decoded = try snapshot.decodeRows(Photo.self).count }
    precondition(decoded == 10_000)
    let foundation = JSONDecoder()
    if let key = CodingUserInfoKey(rawValue: "bench") { foundation.userInfo[key] = true }
    let slow = try sample { decoded = try snapshot.decodeRows(Photo.self, using: foundation).count }
    precondition(decoded == 10_000)
    return (read, fast, slow)
}

/// J: the JSON work alone (no store): index each body with JSONTape and write every row in the
/// canonical form, as RowExtraction does.
func runJSONOnly(_ bodies: [Data], rowsAt key: String?) throws -> Double {
    var written = 0
    let elapsed = try sample {
        for body in bodies {
            try body.withUnsafeBytes { raw in
                let bytes = raw.bindMemory(to: UInt8.self)
                let tape = try JSONTape(parsing: bytes)
                var writer = JSONWriter(capacity: 4096)
                let rows = key.flatMap { tape.member($0, of: 0, in: bytes) }.map { tape.children(of: $0) } ?? [0]
                for row in rows {
                    writer.bytes.removeAll(keepingCapacity: true)
                    writer.canonical(row, of: tape, in: bytes)
                    written += writer.bytes.count
                }
            }
        }
    }
    precondition(written > 0)
    return elapsed
}

/// D: `freshet dump --json` lines for 20,000 records (a mix of fetched pages, upserts and
/// local writes): JSONWriter (`jsonLine`, what dump prints now) vs JSONSerialization of
/// `jsonObject` with sorted keys (what it printed before).
let dumpRecords: [LogRecord] = (0..<20_000).map { i in
    let response = ResponseInfo(url: "http://h/api/v2/pokemon/?offset=\(i)&limit=20", status: 200, etag: "\"e\(i)\"",
                                cacheControl: "max-age=60", durationMicros: 1_500, responseBytes: 2_048)
    let rows = (0..<3).map { Row(id: String(i * 3 + $0), json: Data()) }
    let event: Event = switch i % 3 {
    case 0: .fetched(.init(placement: .page(index: i % 8, isLast: false), rows: rows, response: response, nextCursor: "http://h/next"))
    case 1: .fetched(.init(placement: .upsert, rows: [rows[0]], response: response))
    default: .localWrite(.init([.upsert(rows[0]), .delete(id: "x\(i)")]))
    }
    return LogRecord(lsn: LSN(UInt64(i + 1)), timestamp: Date(timeIntervalSince1970: 1_790_000_000 + Double(i)), collection: "pokemon", event: event)
}
func runDump(foundation: Bool) throws -> Double {
    var bytes = 0
    let elapsed = try sample {
        for record in dumpRecords {
            if foundation {
                bytes += try JSONSerialization.data(withJSONObject: record.jsonObject, options: [.sortedKeys, .withoutEscapingSlashes]).count
            } else {
                bytes += record.jsonLine.utf8.count
            }
        }
    }
    precondition(bytes > 0)
    return elapsed
}

var d1: [Double] = [], d2: [Double] = []
var j1: [Double] = [], j2: [Double] = []
var w2: [Double] = [], w2b: [Double] = [], w3: [Double] = []
var w3Read: [Double] = [], w3Fast: [Double] = [], w3Foundation: [Double] = []
if only == nil || only == "W3" { try await prepareW3() }
defer { try? FileManager.default.removeItem(at: w3Directory) }
for _ in 0..<rounds {
    if only == nil || only == "D" {
        d1.append(try runDump(foundation: false))
        d2.append(try runDump(foundation: true))
    }
    if only == nil || only == "J" {
        j1.append(try runJSONOnly(details, rowsAt: nil))
        j2.append(try runJSONOnly([page], rowsAt: "results"))
    }
    if only == nil || only == "W2" { w2.append(try await runW2()) }
    if only == nil || only == "W2b" { w2b.append(try await runW2b()) }
    if only == nil || only == "W3" {
        w3.append(try runW3())
        let parts = try runW3Parts()
        w3Read.append(parts.snapshot); w3Fast.append(parts.rowDecoder); w3Foundation.append(parts.jsonDecoder)
    }
}
if !d1.isEmpty {
    print("D   dump --json lines, JSONWriter: median \(Int(Double(dumpRecords.count) / d1.sorted()[d1.count / 2])) records/s")
    print("D   dump --json lines, JSONSerialization: median \(Int(Double(dumpRecords.count) / d2.sorted()[d2.count / 2])) records/s")
}
if !j1.isEmpty {
    report("J1  JSONTape + canonical rows, 20 detail documents", j1, unit: "ms", per: detailBytes)
    report("J2  JSONTape + canonical rows, 1,000-row page (\(page.count) bytes)", j2, unit: "ms", per: Double(page.count))
}
if !w2.isEmpty { report("W2  fold a 1,000-row page", w2, unit: "ms") }
if !w2b.isEmpty { report("W2b fold 20 detail documents (\(Int(detailBytes)) bytes)", w2b, unit: "ms", per: detailBytes) }
if !w3.isEmpty {
    report("W3  open + read + decode 10,000 rows", w3, unit: "ms")
    report("W3  part: snapshot (read 10,000 rows)", w3Read, unit: "ms")
    report("W3  part: decodeRows, RowDecoder", w3Fast, unit: "ms")
    report("W3  part: decodeRows, JSONDecoder", w3Foundation, unit: "ms")
}
