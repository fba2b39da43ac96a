import Foundation
import FreshetCommands

// `freshet`: inspect a Freshet store. All logic lives in FreshetCommands so tests can run it.
let tool = Tool(
    standardOutput: { print($0) },
    standardError: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) },
    // `verify` reads possibly damaged stores: in a child process, so a crash is reported, not suffered.
    containment: Tool.defaultContainment()
)
exit(tool.run(Array(CommandLine.arguments.dropFirst())))
