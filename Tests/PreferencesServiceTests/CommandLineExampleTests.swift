import Foundation
import PreferencesModel
import PrefsdTestSupport
import Testing

/// The contract's examples, run as written with the fixture's bus as the session bus.
@Suite("The contract's dbus-send, busctl and gdbus examples")
struct CommandLineExampleTests {
    private let destination = "io.github.prefsd.Preferences1"
    private let path = "/io/github/prefsd/Preferences1"

    @Test("dbus-send writes an int32 and reads back an int64")
    func dbusSend() async throws {
        let fixture = try await ServiceFixture()
        let write = try fixture.run(
            "dbus-send",
            [
                "--session", "--print-reply", "--dest=\(destination)", path, "io.github.prefsd.Preferences1.Write",
                "string:com.example.Editor", "string:FontSize", "variant:int32:14",
            ])
        #expect(write.status == 0, "\(write.stderr)")
        let read = try fixture.run(
            "dbus-send",
            [
                "--session", "--print-reply", "--dest=\(destination)", path, "io.github.prefsd.Preferences1.Read",
                "string:com.example.Editor", "string:FontSize",
            ])
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout.contains("variant") && read.stdout.contains("int64 14"), "\(read.stdout)")
    }

    @Test("busctl introspects the object and writes a string array")
    func busctl() async throws {
        let fixture = try await ServiceFixture()
        let introspect = try fixture.run("busctl", ["--user", "introspect", destination, path])
        #expect(introspect.status == 0, "\(introspect.stderr)")
        for member in [".Read", ".Write", ".Lookup", ".Changed", ".Version", "org.freedesktop.DBus.Properties"] {
            #expect(introspect.stdout.contains(member), "introspection lacks \(member)")
        }
        let write = try fixture.run(
            "busctl",
            [
                "--user", "call", destination, path, "io.github.prefsd.Preferences1", "Write", "ssv",
                "com.example.Editor", "Recent", "as", "2", "a.txt", "b.txt",
            ])
        #expect(write.status == 0, "\(write.stderr)")
        let client = ServiceClient(connection: try fixture.connect())
        #expect(try await client.readValue("com.example.Editor", "Recent") == .array([.string("a.txt"), .string("b.txt")]))
        let read = try fixture.run(
            "busctl", ["--user", "call", destination, path, "io.github.prefsd.Preferences1", "Read", "ss", "com.example.Editor", "Recent"])
        #expect(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == #"v av 2 s "a.txt" s "b.txt""#)
    }

    @Test("gdbus writes a date")
    func gdbus() async throws {
        let fixture = try await ServiceFixture()
        let write = try fixture.run(
            "gdbus",
            [
                "call", "--session", "-d", destination, "-o", path,
                "-m", "io.github.prefsd.Preferences1.Write", "com.example.Editor", "LastOpened", "<(1700000000.0,)>",
            ])
        #expect(write.status == 0, "\(write.stderr)")
        let client = ServiceClient(connection: try fixture.connect())
        #expect(try await client.readValue("com.example.Editor", "LastOpened") == .date(secondsSince1970: 1_700_000_000))
        let nested = try fixture.run(
            "gdbus",
            [
                "call", "--session", "-d", destination, "-o", path,
                "-m", "io.github.prefsd.Preferences1.Write", "com.example.Editor", "Size", "<<5>>",
            ])
        #expect(nested.status == 0, "\(nested.stderr)")
        #expect(try await client.readValue("com.example.Editor", "Size") == .integer(5))
    }
}
