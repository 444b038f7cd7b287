import BusTestSupport
import Foundation
import Testing

@testable import DBus

/// Other D-Bus clients (gdbus, dbus-send, busctl) talk to an object served by this layer.
@Suite struct InteropTests {
    @Test func gdbusVariantInVariant() async throws {
        let fixture = try EchoFixture()
        let result = try runCommand(
            "gdbus",
            [
                "call", "--address", fixture.bus.address, "-d", fixture.server.uniqueName, "-o", "/echo",
                "-m", "com.example.Echo.Echo", "<<5>>", "<(1700000000.0,)>",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("<<5>>"), "\(result.stdout)")
        #expect(result.stdout.contains("<(1700000000.0,)>"), "\(result.stdout)")
    }

    @Test func dbusSendVariant() async throws {
        let fixture = try EchoFixture()
        let result = try runCommand(
            "dbus-send",
            [
                "--bus=\(fixture.bus.address)", "--print-reply", "--dest=\(fixture.server.uniqueName)", "/echo",
                "com.example.Echo.Echo", "string:com.example.Editor", "variant:int32:14",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("string \"com.example.Editor\""), "\(result.stdout)")
        #expect(result.stdout.contains("variant       int32 14"), "\(result.stdout)")
    }

    @Test func busctlArrayOfStrings() async throws {
        let fixture = try EchoFixture()
        let result = try runCommand(
            "busctl",
            [
                "--address=\(fixture.bus.address)", "call", fixture.server.uniqueName, "/echo",
                "com.example.Echo", "Echo", "sas", "k", "2", "a.txt", "b.txt",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "sas \"k\" 2 \"a.txt\" \"b.txt\"")
    }

    @Test func runCommandReportsStatusAndTimeout() throws {
        let ok = try runCommand("sh", ["-c", "echo out; echo err >&2; exit 3"], environment: ["X": "1"])
        #expect(ok.status == 3)
        #expect(ok.stdout == "out\n")
        #expect(ok.stderr == "err\n")
        let slow = try runCommand("sleep", ["10"], timeout: .milliseconds(200))
        #expect(slow.status != 0)
        #expect(throws: BusTestSupportError.self) { _ = try runCommand("no-such-command-here", []) }
    }
}
