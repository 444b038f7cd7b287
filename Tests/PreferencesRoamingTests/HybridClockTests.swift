import Testing

@testable import PreferencesRoaming

@Suite("Hybrid logical clock")
struct HybridClockTests {
    @Test("ticks only move forward, even when the wall clock steps back")
    func monotonic() {
        var clock = HybridClock()
        let a = clock.tick(physical: 1000)
        let b = clock.tick(physical: 1000)
        let c = clock.tick(physical: 900)
        let d = clock.tick(physical: 2000)
        #expect(a < b && b < c && c < d)
        #expect(c.wall == 1000 && d == HybridTime(wall: 2000))
    }

    @Test("a tick after observing a time from a clock far ahead is later than it")
    func observesAhead() {
        var clock = HybridClock()
        let ahead = HybridTime(wall: 10_000_000, counter: 7)
        clock.observe(ahead)
        #expect(clock.tick(physical: 1000) > ahead)
    }

    @Test("a machine identity is derived from the machine ID, never equal to it, and stable")
    func identity() {
        let id = "0123456789abcdef0123456789abcdef"
        let derived = MachineID(derivedFrom: id + "\n")
        #expect(derived.rawValue != id)
        #expect(derived == MachineID(derivedFrom: id))
        #expect(MachineID(derived.rawValue) == derived)
        #expect(MachineID(bytes: derived.bytes) == derived)
        // SHA-256 of "abc", the FIPS 180-4 example.
        let digest: [UInt8] = SHA256.hash(Array("abc".utf8))
        let hex: String = digest.map { (byte: UInt8) -> String in
            let text = String(byte, radix: 16)
            return text.count == 1 ? "0" + text : text
        }.joined()
        #expect(hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test("key patterns: * and ?")
    func patterns() {
        #expect(KeyPattern.matches("Window*", "WindowFrame"))
        #expect(KeyPattern.matches("Window*", "Window"))
        #expect(!KeyPattern.matches("Window*", "MainWindow"))
        #expect(KeyPattern.matches("*.monitor?", "left.monitor2"))
        #expect(!KeyPattern.matches("a?c", "ac"))
        #expect(KeyPattern.matches("*", ""))
    }
}
