import Foundation
import PreferencesModel
import Testing

@testable import PreferencesRoaming

@Suite("Roaming files")
struct RoamingFileTests {
    let now: UInt64 = 1_700_000_000_000

    func sample() -> RoamingFile {
        let machine = Fixture.machine(1)
        let entries = [
            RoamingEntry(key: Fixture.key("FontSize"), value: .integer(14), stamp: RoamingStamp(time: HybridTime(wall: now - 5), machine: machine)),
            RoamingEntry(
                key: Fixture.key("Theme"), value: .dictionary(["a": .array([.real(-0.0), .data(Data([1, 2]))])]),
                stamp: RoamingStamp(time: HybridTime(wall: now - 4, counter: 3), machine: machine)),
            RoamingEntry(key: Fixture.key("Gone"), value: nil, stamp: RoamingStamp(time: HybridTime(wall: now - 3), machine: machine)),
        ]
        return RoamingFile(machine: machine, name: "laptop", entries: entries)
    }

    func decode(_ bytes: [UInt8], limits: RoamingLimits = .default) throws(RoamingError) -> RoamingFile {
        try RoamingFile.decode(bytes, limits: limits, now: now, checkValue: Fixture.check)
    }

    @Test("a file reads back as written, byte for byte")
    func roundTrip() throws {
        let file = sample()
        #expect(try decode(file.encoded()) == file)
    }

    @Test("a damaged or truncated file is refused whole")
    func corrupt() {
        var bytes = sample().encoded()
        bytes[bytes.count / 2] ^= 0x40
        #expect(throws: RoamingError.self) { try decode(bytes) }
        #expect(throws: RoamingError.self) { try decode(Array(sample().encoded().dropLast(7))) }
        #expect(throws: RoamingError.self) { try decode(Array("not a roaming file at all, really".utf8)) }
        #expect(throws: RoamingError.self) { try decode([]) }
    }

    @Test("hostile files: oversized, too deep, invalid names, dated far ahead")
    func hostile() {
        let machine = Fixture.machine(2)
        func file(_ key: RoamingKey, _ value: PropertyListValue?, wall: UInt64 = 1_700_000_000_000) -> [UInt8] {
            RoamingFile(
                machine: machine, name: "evil",
                entries: [
                    RoamingEntry(key: key, value: value, stamp: RoamingStamp(time: HybridTime(wall: wall), machine: machine))
                ]
            ).encoded()
        }
        var deep = PropertyListValue.integer(1)
        for _ in 0..<40 { deep = .array([deep]) }
        #expect(throws: RoamingError.invalidValue("the value of com.example.Editor \"Deep\" nests 40 deep, over the limit of 32")) {
            try decode(file(Fixture.key("Deep"), deep))
        }
        #expect(throws: RoamingError.self) { try decode(file(Fixture.key("Big"), .data(Data(count: 4096))), limits: RoamingLimits(fileBytes: 1024)) }
        var limits = RoamingLimits.default
        limits.entries = 0
        #expect(throws: RoamingError.self) { try decode(file(Fixture.key("A"), .integer(1)), limits: limits) }
        #expect(throws: RoamingError.self) { try decode(file(Fixture.key("A"), .integer(1), wall: now + 31 * 86_400_000)) }
        // An invalid domain name, spelled into the bytes by hand (the type cannot hold one).
        var bytes = file(Fixture.key("A", in: Fixture.domain("com.example.Evil")), .integer(1))
        let evil = Array("Evil".utf8)
        guard let at = (0..<(bytes.count - 4)).first(where: { Array(bytes[$0..<$0 + 4]) == evil }) else {
            Issue.record("the domain is not in the file"); return
        }
        bytes[at] = UInt8(ascii: "/")
        let body = Array(bytes.dropLast(4))
        let sum = RoamingFile.checksum(body[...])
        bytes = body + (0..<4).map { UInt8(truncatingIfNeeded: sum >> UInt32(8 * $0)) }
        #expect(throws: RoamingError.self) { try decode(bytes) }
        // An empty key.
        #expect(throws: RoamingError.self) { try decode(file(Fixture.key(""), .integer(1))) }
    }

    @Test("a key not in NFC is refused: the check compares bytes, not canonically equivalent text")
    func keyNotNFC() throws {
        let machine = Fixture.machine(2)
        func file(_ key: String) -> [UInt8] {
            let stamp = RoamingStamp(time: HybridTime(wall: now), machine: machine)
            return RoamingFile(machine: machine, name: "evil", entries: [RoamingEntry(key: Fixture.key(key), value: .integer(1), stamp: stamp)]).encoded()
        }
        #expect(throws: RoamingError.invalidName("entry 0 of com.example.Editor has a key not in Unicode normalization form C")) {
            try decode(file("Caf\u{65}\u{301}"))
        }
        #expect(try decode(file("Caf\u{E9}")).entries.map { Array($0.key.key.utf8) } == [Array("Caf\u{E9}".utf8)])
    }

    @Test("the folder's files are told apart by the bytes of their names")
    func fileNamesByBytes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-roaming-names-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for name in ["Caf\u{E9}", "Caf\u{65}\u{301}"] {
            try Data("x".utf8).write(to: directory.appendingPathComponent(name + RoamingFolder.suffix))
        }
        let names = RoamingFolder(directory: directory).listing().keys.map { Array($0.text.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(names == [Array("Caf\u{65}\u{301}.prefsd-roaming".utf8), Array("Caf\u{E9}.prefsd-roaming".utf8)])
    }
}
