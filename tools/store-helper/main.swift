// freshet-store-helper MODE ARGS…
//
// A separate process for the storage tests (Tests/FreshetTests/Storage): real processes that
// read, write or create a store, so the tests can kill them mid-read or run two writers at once.
//
//   read DIR                    open DIR read-only, begin reading the log, print `reading`,
//                               and wait inside the read transaction until killed
//   append DIR COLLECTION COUNT open DIR for writing, print `ready`, wait for a line on stdin,
//                               append COUNT `localWrite` events to COLLECTION one by one
//                               (row IDs COLLECTION-0 …), print `done LSN` and exit 0
//   confirm DIR ID COLLECTION ROW
//                               append a `mutationConfirmed` for mutation ID (a UUID) whose
//                               server row is ROW in COLLECTION, `{"by":"helper"}`; print
//                               `confirmed LSN` and exit 0, or `error CODE MESSAGE`, exit 3
//   evict DIR COLLECTION        append an `evicted` event for COLLECTION (garbage collection
//                               in another process); print `evicted LSN` and exit 0
//   compact DIR KILLAT          compact DIR keeping nothing, with a progress call every 10
//                               records; at the KILLAT-th call (from 1) SIGKILL itself; when it
//                               finishes first, print `compacted LSN` (the checkpoint's) and exit 0
//   commits DIR KILLAFTER       open DIR for writing (durability `full`), print `ready`, and
//                               append large transactions until killed; after the first one is
//                               acknowledged a timer SIGKILLs this process KILLAFTER µs later: each one `localWrite`
//                               of 8 rows of 32 KiB to "big" (IDs big-0 … big-31, cycling), and
//                               after each append returns print `acked LSN I` (I from 0; the
//                               rows' JSON holds `"i":I`). Most of the time is spent inside
//                               LMDB's `mdb_txn_commit` (page writes and two flushes), so the
//                               kill mostly lands there (the commit-kill test)
//   open DIR…                   open each DIR for writing, read every collection, close; print
//                               `ok DIR` or `error CODE DIR` (the damaged-file corpus test)
//   create DIR [FSIZE|nobody]   create a store in DIR (with RLIMIT_FSIZE set to FSIZE bytes,
//                               or, when run as root, as user `nobody` (65534), when given);
//                               print `created` and exit 0, or `error CODE MESSAGE`, exit 3
//   fill DIR FSIZE|none         open the existing store in DIR with RLIMIT_FSIZE set to FSIZE
//                               bytes (a disk that is full for this store; `none`: no limit,
//                               for a store on a small file system), append 8 KiB
//                               `localWrite` rows to "fill" (IDs fill-0 …) until an append
//                               fails, printing `acked N LSN` after each; then print
//                               `full CODE MESSAGE`, read the collection back and print
//                               `rows COUNT`, and exit 3 (exit 0 never: the limit is reached)
//
// Exit status 2: bad arguments, or the store could not be opened or written.
import Foundation
import Freshet
import ProcessSupport
#if canImport(Glibc)
import Glibc
#endif

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("freshet-store-helper: \(message)\n".utf8))
    exit(2)
}

/// Prints one line with one write(2), so a reader of the pipe sees it at once.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let mode = arguments.first, arguments.count >= 2 else {
    fail("usage: freshet-store-helper read DIR | append DIR COLLECTION COUNT | create DIR [FSIZE|nobody]")
}
let directory = URL(fileURLWithPath: arguments[1])

switch mode {
case "read":
    var configuration = Configuration(durability: .relaxed)
    configuration.sendsMutations = false
    let store: Store
    do {
        store = try Store(directory: directory, configuration: configuration, create: false)
    } catch {
        fail("cannot open \(directory.path): \(error)")
    }
    do {
        try store.readLog { _ in
            say("reading")
            // Hold the read transaction (and its reader slot) until SIGKILL.
            while true { pause() }
        }
    } catch {
        fail("cannot read \(directory.path): \(error)")
    }
    fail("the log of \(directory.path) is empty")

case "append":
    guard arguments.count == 4, let count = Int(arguments[3]), count >= 0 else {
        fail("usage: freshet-store-helper append DIR COLLECTION COUNT")
    }
    let collection = arguments[2]
    var configuration = Configuration(durability: .relaxed)
    configuration.sendsMutations = false
    let store: Store
    do {
        store = try Store(directory: directory, configuration: configuration)
    } catch {
        fail("cannot open \(directory.path): \(error)")
    }
    say("ready")
    guard readLine(from: STDIN_FILENO) != nil else { fail("stdin closed before the go line") }
    var last = LSN.zero
    for i in 0..<count {
        let row = Row(id: "\(collection)-\(i)", json: Data("{\"n\":\(i)}".utf8))
        do {
            last = try await store.localWrite(collection, [.upsert(row)])
        } catch {
            fail("append \(i) to \(collection) failed: \(error)")
        }
    }
    store.close()
    say("done \(last)")
    exit(0)

case "evict":
    guard arguments.count == 3 else { fail("usage: freshet-store-helper evict DIR COLLECTION") }
    var configuration = Configuration(durability: .relaxed)
    configuration.sendsMutations = false
    configuration.gcTime = .never
    let store: Store
    do {
        store = try Store(directory: directory, configuration: configuration)
    } catch {
        fail("cannot open \(directory.path): \(error)")
    }
    do {
        let lsn = try await store.append(.evicted(Event.Evicted(unobservedMicros: 600_000_000, gcTimeMicros: 300_000_000)), to: arguments[2])
        store.close()
        say("evicted \(lsn)")
        exit(0)
    } catch {
        fail("evict \(arguments[2]) failed: \(error)")
    }

case "confirm":
    guard arguments.count == 5, let uuid = UUID(uuidString: arguments[2]) else {
        fail("usage: freshet-store-helper confirm DIR ID COLLECTION ROW")
    }
    let collection = arguments[3]
    var configuration = Configuration(durability: .relaxed)
    configuration.sendsMutations = false
    let store: Store
    do {
        store = try Store(directory: directory, configuration: configuration)
    } catch {
        fail("cannot open \(directory.path): \(error)")
    }
    let row = Row(id: arguments[4], json: Data("{\"by\":\"helper\"}".utf8))
    let confirmation = Event.MutationConfirmed(id: MutationID(rawValue: uuid), status: 200, rows: [(collection, row)], affected: [collection])
    do {
        let lsn = try await store.append(.mutationConfirmed(confirmation), to: collection)
        store.close()
        say("confirmed \(lsn)")
        exit(0)
    } catch {
        store.close()
        say("error \(error.code) \(error.message)")
        exit(3)
    }

case "compact":
    guard arguments.count == 3, let killAt = Int(arguments[2]) else { fail("usage: freshet-store-helper compact DIR KILLAT") }
    var configuration = Configuration(durability: .full)
    configuration.sendsMutations = false
    let store: Store
    do {
        store = try Store(directory: directory, configuration: configuration)
    } catch {
        fail("cannot open \(directory.path): \(error)")
    }
    var calls = 0
    do {
        let report = try store.compact(keeping: .zero, progressEvery: 10) { _ in
            calls += 1
            if calls == killAt { kill(getpid(), SIGKILL) }
        }
        store.close()
        say("compacted \(report.checkpoint?.lsn ?? .zero)")
        exit(0)
    } catch {
        fail("compact failed: \(error)")
    }

case "create":
    if arguments.count == 3, arguments[2] == "nobody" {
        // Drop root's rights, so file modes apply (group first, while still allowed).
        guard setgid(65534) == 0, setuid(65534) == 0 else { fail("cannot become nobody: \(String(cString: strerror(errno)))") }
    } else if arguments.count == 3 {
        guard let limit = UInt(arguments[2]) else { fail("FSIZE must be a number of bytes") }
        // Writing past the limit is EFBIG (with SIGXFSZ ignored), as a full disk is ENOSPC.
        signal(SIGXFSZ, SIG_IGN)
        var rl = rlimit(rlim_cur: rlim_t(limit), rlim_max: rlim_t(limit))
        guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &rl) == 0 else { fail("setrlimit: \(String(cString: strerror(errno)))") }
    }
    do {
        let store = try Store(directory: directory, configuration: Configuration(durability: .full))
        store.close()
        say("created")
        exit(0)
    } catch {
        say("error \(error.code) \(error.message)")
        exit(3)
    }

case "fill":
    guard arguments.count == 3, arguments[2] == "none" || UInt(arguments[2]) != nil else { fail("usage: freshet-store-helper fill DIR FSIZE|none") }
    if let limit = UInt(arguments[2]) {
        signal(SIGXFSZ, SIG_IGN)
        var rl = rlimit(rlim_cur: rlim_t(limit), rlim_max: rlim_t(limit))
        guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &rl) == 0 else { fail("setrlimit: \(String(cString: strerror(errno)))") }
    }
    let store: Store
    do {
        store = try Store(directory: directory, configuration: Configuration(durability: .full), create: true)
    } catch {
        fail("cannot open \(directory.path): \(error)")
    }
    let filler = String(repeating: "x", count: 8192)
    var i = 0
    while true {
        do {
            let lsn = try await store.localWrite("fill", [.upsert(Row(id: "fill-\(i)", json: Data("{\"pad\":\"\(filler)\"}".utf8)))])
            say("acked \(i) \(lsn)")
            i += 1
        } catch {
            say("full \(error.code) \(error.message)")
            break
        }
    }
    do {
        say("rows \(try store.snapshot("fill").rows.count)")
    } catch {
        say("unreadable \(error.code) \(error.message)")
    }
    store.close()
    exit(3)
case "commits":
    guard arguments.count == 3, let killAfter = UInt32(arguments[2]) else { fail("usage: freshet-store-helper commits DIR KILLAFTER") }
    var configuration = Configuration(durability: .full)
    configuration.sendsMutations = false
    let store: Store
    do {
        store = try Store(directory: directory, configuration: configuration)
    } catch {
        fail("cannot open \(directory.path): \(error)")
    }
    say("ready")
    let pad = String(repeating: "p", count: 32 * 1024)
    var i = 0
    while true {
        let rows = (0..<8).map { k in
            Row(id: "big-\((i * 8 + k) % 32)", json: Data("{\"i\":\(i),\"pad\":\"\(pad)\"}".utf8))
        }
        do {
            let lsn = try await store.localWrite("big", rows.map { .upsert($0) })
            say("acked \(lsn) \(i)")
            if i == 0 {
                // The timer starts once a commit was acknowledged, so every kill has one to check.
                Thread.detachNewThread {
                    usleep(killAfter)
                    kill(getpid(), SIGKILL)
                }
            }
        } catch {
            fail("append \(i) failed: \(error)")
        }
        i += 1
    }

case "open":
    // Each DIR in turn: open it for writing (sending nothing), read every collection and the
    // pending mutations, close; print `ok DIR` or `error CODE DIR`. A crash stops the list:
    // the parent counts the DIR after the last line as a crash and goes on after it.
    var configuration = Configuration(durability: .none)
    configuration.sendsMutations = false
    for path in arguments.dropFirst() {
        do {
            let store = try Store(directory: URL(fileURLWithPath: path), configuration: configuration)
            for name in try store.collections() { _ = try store.snapshot(name) }
            _ = try store.pendingMutations()
            store.close()
            say("ok \(path)")
        } catch {
            say("error \(error.code) \(path)")
        }
    }
    exit(0)

default:
    fail("unknown mode \(mode)")
}
