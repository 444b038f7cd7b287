import GSettingsSnapshots
import Testing

@Suite("Snapshot layout: one directory per bus whatever the address's spelling, a checksum that sees a changed byte")
struct SnapshotLayoutTests {
    @Test(
        "spellings of one bus address name one snapshot directory",
        arguments: [
            "unix:path=/tmp/prefsd-bus-x/bus",
            "unix:path=/tmp/prefsd-bus-x/bus,guid=0123456789abcdef0123456789abcdef",
            "unix:guid=0123456789abcdef0123456789abcdef,path=/tmp/prefsd-bus-x/bus",
            "unix:path=/tmp/prefsd-bus-x/./bus",
            "unix:path=/tmp//prefsd-bus-x/bus",
            "unix:path=/tmp/./prefsd-bus-x/.//bus",
            "unix:path=%2ftmp%2fprefsd-bus-x%2Fbus",
            "unix:path=/tmp/prefsd%2dbus%2dx/bus",
        ])
    func spellings(address: String) {
        #expect(SnapshotLayout.busKey(address) == SnapshotLayout.busKey("unix:path=/tmp/prefsd-bus-x/bus"))
    }

    @Test(
        "different buses name different directories",
        arguments: [
            "unix:path=/tmp/prefsd-bus-y/bus",
            "unix:path=/tmp/prefsd-bus-x/../prefsd-bus-x/bus",
            "unix:abstract=/tmp/prefsd-bus-x/bus",
            "unix:path=/tmp/prefsd-bus-x/bus%20",
            "tcp:host=localhost,port=1234",
        ])
    func differentBuses(address: String) {
        #expect(SnapshotLayout.busKey(address) != SnapshotLayout.busKey("unix:path=/tmp/prefsd-bus-x/bus"))
    }

    @Test("an abstract socket's name is not a path: its `.` components stay")
    func abstractNames() {
        #expect(SnapshotLayout.busKey("unix:abstract=/tmp/./x") != SnapshotLayout.busKey("unix:abstract=/tmp/x"))
    }

    @Test("the checksum is XXH64: the specification's value for no bytes")
    func emptyChecksum() {
        #expect([UInt8]().withUnsafeBytes { SnapshotLayout.checksum($0) } == 0xEF46_DB37_51D8_E999)
    }

    @Test("every single changed byte of a body changes its checksum, at every offset and length")
    func changedByte() {
        var generator = SystemRandomNumberGenerator()
        for length in [1, 3, 7, 8, 31, 32, 33, 100, 257] {
            let body = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let checksum = body.withUnsafeBytes { SnapshotLayout.checksum($0) }
            for offset in 0..<length {
                var damaged = body
                damaged[offset] ^= UInt8.random(in: 1...255, using: &generator)
                #expect(damaged.withUnsafeBytes { SnapshotLayout.checksum($0) } != checksum, "length \(length), offset \(offset)")
            }
            #expect(body.dropLast().withUnsafeBytes { SnapshotLayout.checksum($0) } != checksum, "cut to \(length - 1)")
        }
    }

    @Test("a header holds the checksum it is made with, after the magic and a valid flag")
    func header() {
        let header = SnapshotLayout.header(checksum: 0x0102_0304_0506_0708)
        #expect(header.count == SnapshotLayout.headerSize)
        #expect(Array(header.prefix(8)) == SnapshotLayout.magic)
        #expect(header[SnapshotLayout.flagOffset] == SnapshotLayout.valid)
        #expect(header.withUnsafeBytes { SnapshotLayout.storedChecksum($0) } == 0x0102_0304_0506_0708)
    }
}
