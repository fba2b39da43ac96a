import Foundation
import FreshetTesting
import Testing

@Suite("Stress")
struct StressTests {
    @Test("stress run", arguments: 0..<12)
    func stress(_ lane: Int) async {
        var failures = 0
        for _ in 0..<300 {
            let clock = TestClock()
            let timer = Task {
                while true { try await clock.sleep(for: .seconds(1)) }
            }
            await clock.waitForSleepers(1)
            let drained = await clock.run(maxSteps: 5)
            if drained || clock.now != TestClock.Instant(offset: .seconds(5)) { failures += 1; print("FAIL drained=\(drained) now=\(clock.now) sleepers=\(clock.sleeperCount)") }
            timer.cancel()
            _ = await timer.result
        }
        print("lane \(lane) failures \(failures)/300")
        #expect(failures == 0)
    }
}
