import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How much slower than a plain debug build this test process runs: 15 under
/// ThreadSanitizer, 5 under AddressSanitizer (each measured at 5–15× and 2–5× on the 2-core
/// machine under load, docs/reliability.md "Sanitizers"), 1 otherwise. The environment
/// variable `FRESHET_TEST_TIME_SCALE` (a whole number ≥ 1, set by `make sanitize`) wins.
///
/// The sanitizers are found at run time by their runtimes' entry points (`__tsan_init`,
/// `__asan_init`), which `-sanitize=…` links into the test executable, so a plain
/// `swift test --sanitize=thread` scales too.
public enum TestTimeScale {
    public static let factor: Int = {
        if let text = ProcessInfo.processInfo.environment["FRESHET_TEST_TIME_SCALE"], let n = Int(text), n >= 1 { return n }
        if dlsym(defaultHandle, "__tsan_init") != nil { return 15 }
        if dlsym(defaultHandle, "__asan_init") != nil { return 5 }
        return 1
    }()

    /// `RTLD_DEFAULT`: search the executable and every library loaded (dlsym(3)).
    static var defaultHandle: UnsafeMutableRawPointer? {
        #if canImport(Darwin)
        UnsafeMutableRawPointer(bitPattern: -2)
        #else
        nil
        #endif
    }
}

extension Trait where Self == TimeLimitTrait {
    /// `.timeLimit(.minutes(minutes))`, times ``TestTimeScale/factor``: a guard against a
    /// hang, never a performance assertion, so it grows with a sanitizer's slowdown instead
    /// of failing tests that are merely slow under it.
    public static func scaledTimeLimit(minutes: Int) -> Self {
        .timeLimit(.minutes(minutes * TestTimeScale.factor))
    }
}
