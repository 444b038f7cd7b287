import BenchmarkKit
import BusTestSupport
import DBus
import Foundation
import Synchronization
import Testing

/// The floor service compiled from its source and run on a private bus: it answers `Read`
/// and `Write` as the benchmark relies on, writes its frames durably where it says, and
/// ends with its standard input.
@Suite("Floor service", .serialized)
struct FloorServiceTests {
    static let path = "/io/github/prefsd/Preferences1"
    static let interface = "io.github.prefsd.Preferences1"

    /// The service on `bus`, its WAL-shaped file `wal`.
    static func start(_ executable: String, bus: PrivateBus, wal: URL) throws -> RunningService {
        try RunningService(
            executable, FloorService.arguments(address: bus.address, path: path, interface: interface, walFile: wal.path),
            log: wal.appendingPathExtension("log"))
    }

    static func compile(in directory: URL) throws -> String {
        try compileCProgram(FloorService.source, named: FloorService.executableName, in: directory, library: "dbus-1", package: "libdbus-1-dev")
    }

    static func call(_ member: String, _ body: [DBusValue]) -> DBusMessage {
        .methodCall(destination: FloorService.busName, path: path, interface: interface, member: member, body: body)
    }

    @Test func answersReadAndWriteAndEndsWithItsInput() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let directory = bus.directory
        let executable = try Self.compile(in: directory)
        let wal = directory.appendingPathComponent("wal")
        let service = try Self.start(executable, bus: bus, wal: wal)
        try #require(service.firstLine() == "ready", "the service did not start")
        #expect(try FileManager.default.attributesOfItem(atPath: wal.path)[.size] as? Int == FloorService.walBytes)

        let client = try DBusConnection.connect(address: bus.address)
        defer { client.close() }
        let signals = try await ChangedSignals.listen(client, interface: Self.interface)

        // Read answers the fixed value, whatever the key.
        for key in ["probe", "anything"] {
            let reply = try client.callBlocking(Self.call("Read", [.string("bench.big"), .string(key)]))
            #expect(reply.body == [.variant(.int64(1))])
        }
        #expect(FloorService.readAnswer == "int64 1")

        // Write: the reply, the Changed signal with the key and its value, the frame on disk.
        let written: [DBusValue] = [.string("d"), .string("k"), .variant(.array(element: "i", [.int32(1), .int32(2)]))]
        let reply = try client.callBlocking(Self.call("Write", written))
        #expect(reply.body.isEmpty)
        #expect(await eventually { !signals.all.isEmpty }, "no Changed signal")
        let changed = try #require(signals.all.first)
        #expect(changed.path == Self.path)
        let owner = try client.callBlocking(BusDriver.getNameOwner(FloorService.busName)).body
        #expect(owner == [.string(changed.sender ?? "")])
        #expect(
            changed.body == [
                .string("d"), .array(element: "{sv}", [.dictEntry(.string("k"), .variant(.array(element: "i", [.int32(1), .int32(2)])))]),
                .array(element: "s", []), .array(element: "s", []),
            ])
        _ = try client.callBlocking(Self.call("Write", [.string("d"), .string("k"), .variant(.string("two"))]))
        let bytes = try [UInt8](Data(contentsOf: wal))
        let first = FloorService.walHeaderBytes
        let second = first + FloorService.frameBytes
        #expect(bytes.count == FloorService.walBytes)
        #expect(bytes[first] == 1 && bytes[first + 23] == 1 && bytes[first + 24] == 1)
        #expect(bytes[second] == 2 && bytes[second + 24 + 64] == 2)
        #expect(bytes[first - 1] == 0 && bytes[second + FloorService.frameBytes] == 0)

        // Other members and wrong arguments are refused, not answered.
        for (member, body) in [("Write", [DBusValue.string("d")]), ("Read", [.string("d")]), ("Remove", [.string("d"), .string("k")])] {
            let error = #expect(throws: DBusError.self) { try client.callBlocking(Self.call(member, body)) }
            guard let error, error.code == .remote, let name = error.name else {
                Issue.record("\(member): \(String(describing: error))")
                continue
            }
            #expect(name == "org.freedesktop.DBus.Error.UnknownMethod")
        }

        // Its standard input closed, it exits (no orphan) with status 0.
        try service.input.fileHandleForWriting.close()
        #expect(waitForExit(of: service.process, timeout: .seconds(10)) == 0)
    }

    @Test func aTakenNameIsAnErrorThatSaysSo() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let executable = try Self.compile(in: bus.directory)
        let first = try Self.start(executable, bus: bus, wal: bus.directory.appendingPathComponent("wal1"))
        try #require(first.firstLine() == "ready")
        let second = try Self.start(executable, bus: bus, wal: bus.directory.appendingPathComponent("wal2"))
        #expect(waitForExit(of: second.process, timeout: .seconds(10)) == 1)
        #expect(second.firstLine() == nil)
        #expect(second.standardError.contains("\(FloorService.busName): the name is taken"))
    }
}
