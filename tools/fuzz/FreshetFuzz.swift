// freshet-fuzz: libFuzzer targets for Freshet's parsers of untrusted input (docs/reliability.md,
// "Fuzzing"). `make fuzz` builds it with `-sanitize=fuzzer,address -DFUZZING` and runs each
// target for a fixed time:
//
//   FRESHET_FUZZ_TARGET=record .build-fuzz/debug/freshet-fuzz -max_total_time=20 NEW_DIR fuzz/corpus/record
//
// Targets (Freshet's FuzzTargets): record, jsonl, headers, rows, events. In an ordinary build (no
// FUZZING) it replays inputs instead: `freshet-fuzz TARGET FILE…` runs each file through the
// target and prints `ok N inputs`; exit 2 for a bad target name or an unreadable file.
import Foundation
import Freshet

#if FUZZING
/// The target named by `FRESHET_FUZZ_TARGET`, read once.
let fuzzTarget: String = {
    guard let name = ProcessInfo.processInfo.environment["FRESHET_FUZZ_TARGET"], FuzzTargets.names.contains(name) else {
        FileHandle.standardError.write(Data("freshet-fuzz: set FRESHET_FUZZ_TARGET to one of \(FuzzTargets.names.joined(separator: ", "))\n".utf8))
        exit(2)
    }
    return name
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTargets.run(fuzzTarget, Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// libFuzzer's driver (compiler-rt `FuzzerDriver.cpp`, exported since LLVM 12).
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32) -> Int32

/// SwiftPM links an executable with `main` defined as `<module>_main`, so libFuzzer's own
/// `main` is never linked in: this is that entry point, handing over to libFuzzer's driver.
@_cdecl("freshet_fuzz_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments, fuzzOneInput)
}
#else
@main
struct ReplayInputs {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let target = arguments.first, FuzzTargets.names.contains(target) else {
            FileHandle.standardError.write(Data("usage: freshet-fuzz \(FuzzTargets.names.joined(separator: "|")) FILE…\n".utf8))
            exit(2)
        }
        for path in arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("freshet-fuzz: cannot read \(path)\n".utf8))
                exit(2)
            }
            FuzzTargets.run(target, Array(data))
        }
        print("ok \(arguments.count - 1) inputs")
    }
}
#endif
