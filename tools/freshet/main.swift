import Foundation
import FreshetCommands

// `freshet`: inspect a Freshet store. All logic lives in FreshetCommands so tests can run it
// (Tool.runProcess: checked standard output, verify in a child process).
exit(Tool.runProcess(Array(CommandLine.arguments.dropFirst())))
