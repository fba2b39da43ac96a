import Foundation
import ProcessSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What `freshet-demo --help` prints (trial finding 14: the demo used to ignore its arguments).
let demoUsage = """
    usage: freshet-demo [--help | -h]

    The demo behind `make demo`: starts the fixture API server (tools/fixture-server, python3)
    on 127.0.0.1:8151 (a free port when that one is taken), shows an app's screens over its
    PokeAPI and JSONPlaceholder data, pushes a server-side change, then relaunches offline.

    Run it from the repository root. It writes ./demo-store (the store, kept between runs: a
    second run within max-age sends no GET) and ./demo-requests.jsonl (this run's requests).
    It takes no other options and reads no environment variables. SIGINT (Ctrl-C) or SIGTERM
    stops the fixture server before the demo exits.
    """

/// Reads the arguments: `--help`/`-h` print ``demoUsage`` and exit 0; anything else exits 2
/// with one line; no arguments return and the demo runs.
func checkArguments(_ arguments: [String]) {
    guard let first = arguments.first else { return }
    if arguments.count == 1, first == "--help" || first == "-h" {
        print(demoUsage)
        exitIfOutputFailed()
        exit(0)
    }
    let unknown = arguments.first { $0 != "--help" && $0 != "-h" } ?? first
    FileHandle.standardError.write(Data("freshet-demo: unknown argument \(unknown.debugDescription) (freshet-demo takes only --help)\n".utf8))
    exit(2)
}

/// Why standard output could not be written (`strerror` of the first failed flush), or nil.
/// Set by `print`; read when the demo ends, so the server is stopped first (no early exit).
nonisolated(unsafe) var outputFailure: String?

/// Flushes standard output, remembering the first failure in ``outputFailure``.
func flushOutput() {
    if fflush(nil) != 0, outputFailure == nil { outputFailure = String(cString: strerror(errno)) }
}

/// Exits 2 with one line on stderr when standard output could not be written (a full disk,
/// a closed pipe): `freshet-demo > /dev/full` must not report success.
func exitIfOutputFailed() {
    flushOutput()
    guard let outputFailure else { return }
    FileHandle.standardError.write(Data("freshet-demo: cannot write the output: \(outputFailure)\n".utf8))
    exit(2)
}

/// The fixture server's pid while it runs (0: none), read by ``stopOnSignal(_:)``.
private let watchedChild = Atomic<Int32>(0)

/// Stops the fixture server when the demo is told to stop (SIGINT, SIGTERM): without this the
/// server, a child process, outlives the demo (re-parented to PID 1; trial finding 14).
///
/// A `sigaction` handler, not a dispatch source: the usual recipe (`SIG_IGN`, then a
/// `DispatchSource` for the signal) works with kqueue on Darwin, but on Linux a signal whose
/// action is `SIG_IGN` is discarded when sent, and the source never fired (tried: the demo ran
/// on to its watchdog).
/// The handler does only async-signal-safe calls: SIGKILL the child, reap it (`waitpid`), then
/// end the demo with the same signal under its default action, as the sender expects.
enum StopOnSignal {
    static func install(_ signals: [Int32] = [SIGINT, SIGTERM]) {
        for number in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                let pid = watchedChild.load(ordering: .sequentiallyConsistent)
                if pid > 0 {
                    kill(pid, SIGKILL)
                    var status: Int32 = 0
                    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                }
                signal(number, SIG_DFL)
                raise(number)
            }
            sigemptyset(&action.sa_mask)
            sigaction(number, &action, nil)
        }
    }

    /// The child to stop on a signal; nil before the demo stops it itself (so a signal never
    /// reaches a reused pid).
    static func watch(_ process: SpawnedProcess?) {
        watchedChild.store(process?.pid ?? 0, ordering: .sequentiallyConsistent)
    }
}
