import Foundation
import Freshet
import FreshetHTTP
import FreshetTesting
import Testing

@Suite("SeededRandom and Dependencies.test")
struct SeededRandomTests {
    @Test("seed 0 gives the reference SplitMix64 sequence")
    func referenceSequence() {
        #expect(SeededRandom.values(3, seed: 0) == [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F])
    }

    @Test("the same seed gives the same first numbers, another seed different ones")
    func reproducible() {
        let first = SeededRandom.source(seed: 42)
        let second = SeededRandom.source(seed: 42)
        let other = SeededRandom.source(seed: 43)
        let a = (0..<3).map { _ in first.next() }
        let b = (0..<3).map { _ in second.next() }
        let c = (0..<3).map { _ in other.next() }
        #expect(a == b)
        #expect(a == SeededRandom.values(3, seed: 42))
        #expect(a != c)
    }

    @Test("Dependencies.test wires the clock, its dates, the seed and the transport together")
    func testDependencies() async throws {
        let clock = TestClock()
        let transport = ScriptedTransport(clock: clock)
        transport.on("/ping", reply: .status(204))
        let dependencies = Dependencies.test(clock: clock, transport: transport, seed: 7)

        #expect(dependencies.now() == Date(timeIntervalSince1970: 1_767_225_600))
        #expect((dependencies.clock as? TestClock) === clock)
        #expect([dependencies.random.next(), dependencies.random.next()] == SeededRandom.values(2, seed: 7))
        #expect(try await dependencies.transport.send(try request("/ping")).status == 204)
        #expect(transport.requests.count == 1)

        let sleeper = Task { try await dependencies.clock.sleep(for: .seconds(30)) }
        await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(30))
        try await sleeper.value
        #expect(dependencies.now() == Date(timeIntervalSince1970: 1_767_225_630))
    }
}
