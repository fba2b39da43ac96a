// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Freshet",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "Freshet", targets: ["Freshet"]),
        .library(name: "FreshetHTTP", targets: ["FreshetHTTP"]),
        .library(name: "FreshetTesting", targets: ["FreshetTesting"]),
        .library(name: "FreshetModels", targets: ["FreshetModels"]),
        .executable(name: "freshet", targets: ["freshet"]),
        .executable(name: "freshet-demo", targets: ["FreshetDemo"]),
        .executable(name: "freshet-bench", targets: ["freshet-bench"]),
    ],
    targets: [
        // The C library: a module map and a shim header, nothing else (see docs/architecture.md).
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        // SQLite's C library, for the side-by-side benchmark only (tools/freshet-bench).
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // CRC-32C for record checksums: the CPU instruction (SSE4.2 / ARMv8 CRC) or slicing-by-8 tables.
        .target(name: "CCRC32C"),
        // A cache prefetch hint (`__builtin_prefetch`), which Swift cannot ask for: the log tools' fold.
        .target(name: "CPrefetch"),
        // A small safe wrapper over LMDB, visible only inside this package.
        .target(name: "FreshetLMDB", dependencies: ["CLMDB"]),
        // HTTP requests, responses and the URLSession transport.
        .target(name: "FreshetHTTP"),
        // The log, the fold, the store, observation and refresh.
        .target(name: "Freshet", dependencies: ["FreshetLMDB", "FreshetHTTP", "CCRC32C", "CPrefetch"]),
        // `@Observable` query and mutation models for SwiftUI-style apps, built on Freshet's
        // public API only (docs/swiftui.md, docs/architecture.md "The app layer").
        .target(name: "FreshetModels", dependencies: ["Freshet"]),
        // The test kit: TestClock, ScriptedTransport, SeededRandom, Dependencies.test.
        .target(name: "FreshetTesting", dependencies: ["Freshet", "FreshetHTTP"]),
        // The command-line tool's logic (parsing, commands), kept in a library so tests reach it.
        .target(name: "FreshetCommands", dependencies: ["Freshet", "ProcessSupport"]),
        // The command-line tool: `freshet dump DIR`.
        .executableTarget(name: "freshet", dependencies: ["FreshetCommands"], path: "tools/freshet"),
        // posix_spawn's and pipe2's GNU extensions, which Swift's Glibc module does not see.
        .target(name: "CSpawn", path: "tools/cspawn"),
        // Child processes without Foundation's Process (SpawnedProcess: posix_spawn, empty signal
        // mask) and reading their output lines safely (EINTR), for the tools and the tests.
        .target(name: "ProcessSupport", dependencies: ["CSpawn"], path: "tools/process-support"),
        // The demo behind `make demo`.
        .executableTarget(name: "FreshetDemo", dependencies: ["Freshet", "FreshetHTTP", "FreshetModels", "ProcessSupport"], path: "tools/demo"),
        // `swift run -c release freshet-bench`: Freshet side by side with raw LMDB and SQLite (docs/performance.md).
        .executableTarget(name: "freshet-bench", dependencies: ["Freshet", "FreshetHTTP", "FreshetCommands", "CLMDB", "CSQLite", "ProcessSupport"], path: "tools/freshet-bench"),
        // A process the mutation crash test kills mid-request (Tests/FreshetTests/Mutations).
        .executableTarget(name: "freshet-crash-helper", dependencies: ["Freshet"], path: "tools/crash-helper"),
        // Processes the storage tests kill mid-read or run as a second writer (Tests/FreshetTests/Storage).
        .executableTarget(name: "freshet-store-helper", dependencies: ["Freshet", "ProcessSupport"], path: "tools/store-helper"),
        // `make stress`: SIGKILLs a writing child process at random points and checks the store (docs/reliability.md).
        .executableTarget(name: "freshet-stress", dependencies: ["Freshet", "ProcessSupport"], path: "tools/stress"),
        // libFuzzer targets for the parsers of untrusted input (`make fuzz`, docs/reliability.md).
        .executableTarget(name: "freshet-fuzz", dependencies: ["Freshet"], path: "tools/fuzz"),
        // What more than one test target needs (the sanitizer-scaled time limit), kept once.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "FreshetHTTPTests", dependencies: ["FreshetHTTP", "ProcessSupport", "TestSupport"]),
        .testTarget(name: "FreshetTests", dependencies: ["Freshet", "FreshetModels", "FreshetHTTP", "FreshetLMDB", "FreshetCommands", "FreshetTesting", "ProcessSupport", "TestSupport"]),
        .testTarget(name: "FreshetTestingTests", dependencies: ["FreshetTesting", "Freshet", "FreshetHTTP"]),
    ],
    swiftLanguageModes: [.v6]
)
