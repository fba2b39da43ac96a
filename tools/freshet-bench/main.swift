import Foundation

// freshet-bench: the same workloads done by Freshet, by raw LMDB (the floor) and by SQLite,
// side by side. docs/performance.md explains every workload and holds the results.
//
//   swift run -c release freshet-bench [--rounds N] [--json FILE] [--only W2,W3]
//   swift run freshet-bench --smoke        (every workload small; exits 1 when engines disagree)
//
// The parent process prepares the inputs, then runs each (workload, engine) in a child process
// of its own (`--child`), rounds interleaved, so each child's peak memory (ru_maxrss) is its
// workload's alone. Exit status: 0 ok, 1 engines disagree or a workload failed, 2 usage.

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    let options = try Options.parse(arguments)
    switch options.mode {
    case .help:
        print(Options.usage)
    case .run:
        exit(await Runner(options: options).run())
    case .child(let job):
        exit(await Child.run(job, options: options))
    }
} catch {
    FileHandle.standardError.write(Data("freshet-bench: \(error.message)\n\(Options.usage)\n".utf8))
    exit(2)
}
