import Foundation
import PrefsdTestSupport
import Testing
import Xfconf

/// `prefsd --xfconf` takes in the user's channel files at start and writes them at stop;
/// Debian's xfconfd, started on them afterwards, answers every value.
@Suite("prefsd --xfconf takes in the user's channel files and leaves them holding every value", .serialized)
struct XfconfChannelTakeInTests {
    private func property(_ path: String) throws -> XfconfProperty { try XfconfProperty(path) }

    /// A bus on which prefsd is not started yet, and its user's channel folder.
    private func fixture() throws -> (ServiceFixture, URL) {
        let service = try ServiceFixture(activatable: ())
        let folder = service.bus.directory.appendingPathComponent("config/xfce4/xfconf/xfce-perchannel-xml", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return (service, folder)
    }

    /// Starts prefsd with `--xfconf` and waits until it owns xfconf's name.
    private func start(_ service: ServiceFixture) async throws {
        try await service.startService(arguments: ["--xfconf"])
        let owned = try await eventually(timeout: .seconds(30)) { service.bus.processID(owning: "org.xfce.Xfconf") != nil }
        if !owned { throw FixtureError("prefsd did not own org.xfce.Xfconf; its log ends: \(service.log.suffix(2000))") }
    }

    private func query(_ service: ServiceFixture, _ arguments: [String]) throws {
        let result = try runCommand(
            "xfconf-query", arguments,
            environment: ["DBUS_SESSION_BUS_ADDRESS": service.bus.address, "XDG_CONFIG_HOME": service.bus.directory.appendingPathComponent("config").path])
        if result.status != 0 { throw FixtureError("xfconf-query \(arguments) failed: \(result.stderr)") }
    }

    private static let scalars: [XfconfScalar] = [
        .bool(true), .int32(Int32.min), .uint32(UInt32.max), .int64(Int64.min), .uint64(UInt64.max), .double(0.1),
        .string("é<>&\"' \t\nend"), .string(""), .uchar(255), .int16(-7), .uint16(7),
    ]

    @Test(
        "the files are taken in exactly; a damaged one, a FIFO, links to one or to itself, 100 MB, billion laughs and a channel prefsd cannot name left aside and named; at stop the files hold every value, and xfconfd serves them"
    )
    func takeInAndWriteBack() async throws {
        let (service, folder) = try fixture()
        var values: [XfconfProperty: XfconfValue] = [:]
        for (index, scalar) in Self.scalars.enumerated() {
            values[try property("/scalars/s\(index)")] = .scalar(scalar)
        }
        values[try property("/mixed")] = .array(Self.scalars)
        values[try property("/empty-array")] = .array([])
        try Data(XfconfChannelFile(channelName: "good", values: values).xml.utf8).write(to: folder.appendingPathComponent("good.xml"))
        try Data("<channel name=\"bad\" version=\"1.0\"><property name=\"a\" type=\"int\" value=\"x\"/></channel>".utf8)
            .write(to: folder.appendingPathComponent("bad.xml"))
        #expect(mkfifo(folder.appendingPathComponent("fifo.xml").path, 0o600) == 0)
        // A link to a FIFO, a link that loops, a 100 MB file (sparse), billion laughs.
        let outside = service.bus.directory.appendingPathComponent("a-fifo").path
        #expect(mkfifo(outside, 0o600) == 0 && symlink(outside, folder.appendingPathComponent("link.xml").path) == 0)
        #expect(symlink("loop.xml", folder.appendingPathComponent("loop.xml").path) == 0)
        let huge = folder.appendingPathComponent("huge.xml").path
        #expect(FileManager.default.createFile(atPath: huge, contents: nil) && truncate(huge, 100 << 20) == 0)
        var laughs = "<?xml version=\"1.0\"?>\n<!DOCTYPE channel [\n<!ENTITY l0 \"lol\">\n"
        for level in 1...9 { laughs += "<!ENTITY l\(level) \"" + String(repeating: "&l\(level - 1);", count: 10) + "\">\n" }
        laughs += "]>\n<channel name=\"laughs\" version=\"1.0\"><property name=\"a\" type=\"string\" value=\"&l9;\"/></channel>\n"
        try Data(laughs.utf8).write(to: folder.appendingPathComponent("laughs.xml"))
        let unnamed = Data("<channel name=\"a:b\" version=\"1.0\"/>".utf8)
        try unnamed.write(to: folder.appendingPathComponent("a:b.xml"))

        try await start(service)
        let served = try RealXfconfd.allProperties("good", busAddress: service.bus.address)
        // (As the file holds them: a 16-bit integer written as int or uint.)
        #expect(served == Dictionary(uniqueKeysWithValues: values.map { ($0.key.path, $0.value.widened) }))
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(names.contains { $0.hasPrefix("good.xml.taken-in-") })
        #expect(names.contains { $0.hasPrefix("bad.xml.damaged-") } && !names.contains("bad.xml"))
        for name in ["fifo", "link", "loop", "huge", "laughs"] {
            #expect(names.contains { $0.hasPrefix("\(name).xml.damaged-") } && !names.contains("\(name).xml"), "\(name): \(names)")
            #expect(service.log.contains("\(name).xml"), "\(name)")
        }
        #expect(try Data(contentsOf: folder.appendingPathComponent("a:b.xml")) == unnamed)
        #expect(service.log.contains("bad.xml") && service.log.contains("fifo.xml") && service.log.contains("a:b.xml"))

        // Changed through xfconf, then prefsd stops.
        try query(service, ["-c", "good", "-p", "/new", "-n", "-t", "int", "-s", "7"])
        try query(service, ["-c", "good", "-p", "/scalars/s0", "-r"])
        try query(service, ["-c", "fresh", "-p", "/a/b", "-n", "-t", "string", "-s", "made under prefsd"])
        #expect(service.stopService() == 0)

        var expected = values
        expected[try property("/new")] = .scalar(.int32(7))
        expected[try property("/scalars/s0")] = nil
        let written = try XfconfChannelFile(parsing: Data(contentsOf: folder.appendingPathComponent("good.xml")), administrator: false)
        #expect(written.values == expected.mapValues(\.widened))

        // Debian's xfconfd on the same folder answers every value.
        let xfconfd = try RealXfconfd(directory: service.bus.directory)
        try await xfconfd.start()
        #expect(try xfconfd.allProperties("good") == Dictionary(uniqueKeysWithValues: expected.map { ($0.key.path, $0.value.widened) }))
        #expect(try xfconfd.allProperties("fresh") == ["/a/b": .scalar(.string("made under prefsd"))])
        #expect(xfconfd.stop() == 0)
    }

    @Test("a file xfconfd changed after prefsd wrote it is taken in again, a property reset there removed; prefsd's own file is not")
    func takenInAgain() async throws {
        let (service, folder) = try fixture()
        let file = folder.appendingPathComponent("panel.xml")
        try Data(
            XfconfChannelFile(
                channelName: "panel", values: [try property("/size"): .scalar(.uint32(24)), try property("/dark"): .scalar(.bool(true))]
            ).xml.utf8
        ).write(to: file)
        try await start(service)
        #expect(service.stopService() == 0)
        let takenIn = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".taken-in-") }
        #expect(takenIn.count == 1)

        // Started again on its own file: nothing taken in.
        try await start(service)
        #expect(service.stopService() == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".taken-in-") } == takenIn)

        // xfconfd changes one property and resets the other.
        let xfconfd = try RealXfconfd(directory: service.bus.directory)
        try await xfconfd.start()
        _ = try xfconfd.query(["-c", "panel", "-p", "/size", "-s", "32"])
        _ = try xfconfd.query(["-c", "panel", "-p", "/dark", "-r"])
        #expect(xfconfd.stop() == 0)

        try await start(service)
        #expect(try RealXfconfd.allProperties("panel", busAddress: service.bus.address) == ["/size": .scalar(.uint32(32))])
        #expect(service.stopService() == 0)
    }
}
