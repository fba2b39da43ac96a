// freshet-stress [run] [--mode short|long] [--seed N] [--iterations N] [--durability full|relaxed|none]
//                [--fresh-every N] [--directory DIR] [--keep]
// freshet-stress child DIR DURABILITY SEED ITERATION TASKS      (started by the run itself)
//
// The SIGKILL campaign of issue 12 item 1 (docs/reliability.md, "Stress"): a child process
// appends fetches, mutations, confirmations, rollbacks and local writes and compacts the log; the parent kills it at
// random points (seeded; the seed is printed, and `--seed` replays a run) and checks the store
// after each kill. `make stress` runs the short mode (in `make test`), `make stress-long` the
// long one. Exit status 0: nothing lost or wrong; 1: a check failed (the message says which,
// with the seed and iteration); 2: bad arguments.
import Foundation

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "child" {
    await Child.run(Array(arguments.dropFirst()))
}
if arguments.first == "run" { arguments.removeFirst() }
let options: Parent.Options
do {
    options = try Parent.parse(arguments)
} catch {
    FileHandle.standardError.write(Data("freshet-stress: \(error)\n".utf8))
    exit(2)
}
var parent = Parent(options: options)
do {
    try parent.run()
    Parent.say(parent.summary())
    exit(parent.figures.lost == 0 ? 0 : 1)
} catch {
    Parent.say(parent.summary())
    FileHandle.standardError.write(Data("freshet-stress: FAILED: \(error)\n".utf8))
    exit(1)
}
