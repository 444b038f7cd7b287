import Dconf
import Foundation
import PrefsdTestSupport
import Testing

/// The files `prefs dconf-switch` writes beside the user's own: what was there before is
/// kept and comes back byte for byte, and what the switch writes still serves dconf when
/// prefsd is gone.
@Suite("prefs dconf-switch and the user's own files", .serialized)
struct DconfSwitchFilesTests {
    @Test(
        "the user's own dconf service file, make install's prefsd service files and a user's unit enabled at login: kept through a switch, each back byte for byte after it"
    )
    func keepsTheUsersFiles() async throws {
        let server = try await DconfServer(startingPrefsd: false)
        let session = try SwitchSession(server)
        defer { session.killServices() }
        #expect(try server.dconf(["write", "/org/example/app/size", "42"]).status == 0)
        let prefsd = ServiceFixture.binary.path
        let admin = ServiceFixture.administratorArguments(in: server.service.bus.directory).joined(separator: " ")
        // The user's own dconf-service file, and prefsd's as `make install` writes them.
        let services: [String: String] = [
            "ca.desrt.dconf.service": SwitchSession.ownDconfService,
            "io.github.prefsd.Preferences1.service":
                "[D-BUS Service]\nName=io.github.prefsd.Preferences1\nExec=\(prefsd) \(admin)\nSystemdService=prefsd.service\n",
            "io.github.prefsd.Sandboxed1.service":
                "[D-BUS Service]\nName=io.github.prefsd.Sandboxed1\nExec=\(prefsd) \(admin)\nSystemdService=prefsd.service\n",
        ]
        try FileManager.default.createDirectory(at: session.servicesDirectory, withIntermediateDirectories: true)
        for (name, contents) in services {
            try contents.write(to: session.servicesDirectory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        // A unit of the user's own, enabled as `systemctl --user enable` does.
        let unit = session.unitDirectory.appendingPathComponent("prefsd.service")
        try FileManager.default.createDirectory(at: session.unitDirectory.appendingPathComponent("default.target.wants"), withIntermediateDirectories: true)
        try "[Unit]\nDescription=my prefsd\n\n[Service]\nExecStart=\(prefsd) --log-level debug\n".write(to: unit, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(
            atPath: session.unitDirectory.appendingPathComponent("default.target.wants/prefsd.service").path, withDestinationPath: unit.path)
        let servicesBefore = session.files(in: session.servicesDirectory)
        let unitsBefore = session.files(in: session.unitDirectory)

        let switched = try session.prefs("dconf-switch", "--prefsd", prefsd)
        #expect(switched.status == 0, "\(switched.stdout)\(switched.stderr)")
        #expect(session.ownerArguments().contains("--dconf"), "\(session.ownerArguments())")
        let unitsSwitched = session.files(in: session.unitDirectory)
        #expect(unitsSwitched["prefsd.service"] == unitsBefore["prefsd.service"], "the user's unit was changed: \(unitsSwitched)")
        #expect(unitsSwitched["default.target.wants/prefsd.service"] == unitsBefore["default.target.wants/prefsd.service"])
        #expect(unitsSwitched["prefsd.service.d/dconf-switch.conf"]?.contains("--dconf") == true, "no drop-in: \(unitsSwitched.keys.sorted())")
        #expect(switched.stdout.contains("kept"), "\(switched.stdout)")
        // Kept, not lost: each of the user's service files is somewhere, byte for byte.
        let servicesSwitched = session.files(in: session.servicesDirectory)
        for (name, contents) in services {
            #expect(servicesSwitched.values.contains(contents), "\(name) is gone: \(servicesSwitched)")
        }
        #expect(try server.dconf(["write", "/org/example/app/size", "43"]).status == 0)

        let back = try session.prefs("dconf-switch-back")
        #expect(back.status == 0, "\(back.stdout)\(back.stderr)")
        #expect(session.files(in: session.servicesDirectory) == servicesBefore, "\(session.files(in: session.servicesDirectory))")
        #expect(session.files(in: session.unitDirectory) == unitsBefore, "\(session.files(in: session.unitDirectory))")
        // The user's dconf-service file serves dconf again, and make install's starts prefsd.
        #expect(try server.dconf(["write", "/org/example/app/size", "44"]).status == 0)
        #expect(session.ownDconfServiceServes, "\(session.ownerArguments())")
        let read = try session.prefs("read", "org.example.app", "size")
        #expect(read.status == 0 && read.stdout == "43\n", "\(read)")
        #expect(!session.ownerArguments(SwitchSession.prefsdName).contains("--dconf"), "\(session.ownerArguments(SwitchSession.prefsdName))")
    }

    @Test("prefsd removed after a switch (as a package purge removes it): the next dconf client starts dconf-service, on a file holding every value")
    func prefsdGone() async throws {
        let server = try await DconfServer(startingPrefsd: false)
        let bus = server.service.bus
        let session = try SwitchSession(server)
        defer { session.killServices() }
        // The prefsd the switch starts, at a path that can be taken away.
        let installed = bus.directory.appendingPathComponent("bin/prefsd")
        try FileManager.default.createDirectory(at: installed.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: installed.path, withDestinationPath: ServiceFixture.binary.path)
        #expect(try server.dconf(["load", "/"], input: "[org/example/app]\nidle=uint32 600\nsize=42\n").status == 0)

        let switched = try session.prefs("dconf-switch", "--prefsd", installed.path)
        #expect(switched.status == 0, "\(switched.stdout)\(switched.stderr)")
        #expect(try server.dconf(["write", "/org/example/app/size", "43"]).status == 0)
        let pid = try #require(bus.processID(owning: DconfBus.busName))
        #expect(session.ownerArguments().contains("--dconf"), "\(session.ownerArguments())")

        // The package goes; the session ends the prefsd it ran.
        try FileManager.default.removeItem(at: installed)
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + .seconds(30)
        while bus.processID(owning: DconfBus.busName) == pid {
            guard ContinuousClock.now < deadline else { throw FixtureError("prefsd did not stop on SIGTERM") }
            try await Task.sleep(for: .milliseconds(20))
        }

        let written = try server.dconf(["write", "/org/example/app/size", "44"])
        #expect(written.status == 0, "\(written.stderr)")
        #expect(session.ownerArguments().last?.hasSuffix("dconf-service") == true, "\(session.ownerArguments())")
        #expect(try server.dconf(["dump", "/"]).stdout == "[org/example/app]\nidle=uint32 600\nsize=44\n")
    }
}
