import Dconf
import Foundation
import PrefsdTestSupport
import Testing

/// `prefs dconf-switch` when the prefsd it starts cannot serve: the command says why at once
/// and leaves dconf-service serving, with the user's files as they were.
@Suite("prefs dconf-switch that cannot complete", .serialized)
struct DconfSwitchFailureTests {
    @Test("another prefsd serves the store from another bus: the switch fails at once naming it, and changes nothing")
    func storeHeldElsewhere() async throws {
        let server = try await DconfServer(startingPrefsd: false)
        let session = try SwitchSession(server)
        defer { session.killServices() }
        #expect(try server.dconf(["write", "/org/example/app/size", "42"]).status == 0)
        // A prefsd of another session on the same store (its own bus, the same home).
        let other = try PrivateBus()
        defer { other.stop() }
        let holder = Process()
        holder.executableURL = ServiceFixture.binary
        holder.arguments = ["--address", other.address, "--log-level", "warning"] + ServiceFixture.administratorArguments(in: other.directory)
        holder.environment = helperEnvironment.merging(["XDG_CONFIG_HOME": server.configHome.path]) { $1 }
        try holder.run()
        defer { _ = BusTestSupport.stop(holder, signal: SIGKILL) }
        let deadline = ContinuousClock.now + .seconds(60)
        while other.processID(owning: SwitchSession.prefsdName) == nil {
            guard ContinuousClock.now < deadline, holder.isRunning else { throw FixtureError("the other prefsd did not start") }
            try await Task.sleep(for: .milliseconds(20))
        }

        let started = ContinuousClock.now
        let switched = try session.prefs("dconf-switch", "--prefsd", ServiceFixture.binary.path)
        let took = ContinuousClock.now - started
        #expect(switched.status != 0, "\(switched.stdout)")
        #expect(switched.stderr.contains("pid \(holder.processIdentifier)"), "\(switched.stderr)")
        #expect(switched.stderr.contains(session.storeDirectory.path), "\(switched.stderr)")
        // At once: prefsd would wait 10 s for the store's lock before giving up.
        #expect(took < .seconds(8), "\(took)")
        #expect(session.files(in: session.servicesDirectory).isEmpty, "\(session.files(in: session.servicesDirectory))")
        #expect(session.files(in: session.unitDirectory).isEmpty, "\(session.files(in: session.unitDirectory))")
        #expect(try server.dconf(["write", "/org/example/app/size", "43"]).status == 0)
        #expect(session.ownerArguments().last?.hasSuffix("dconf-service") == true, "\(session.ownerArguments())")
    }

    @Test("the prefsd started exits at once (74: its store cannot be opened): the switch says so and puts dconf-service back, the user's file included")
    func prefsdExits() async throws {
        let server = try await DconfServer(startingPrefsd: false)
        let session = try SwitchSession(server)
        defer { session.killServices() }
        #expect(try server.dconf(["write", "/org/example/app/size", "42"]).status == 0)
        let own = SwitchSession.ownDconfService
        try FileManager.default.createDirectory(at: session.servicesDirectory, withIntermediateDirectories: true)
        try own.write(to: session.servicesDirectory.appendingPathComponent("ca.desrt.dconf.service"), atomically: true, encoding: .utf8)
        // A file where the store's directory should be.
        try "not a directory".write(to: session.storeDirectory, atomically: true, encoding: .utf8)

        let switched = try session.prefs("dconf-switch", "--prefsd", ServiceFixture.binary.path)
        #expect(switched.status != 0, "\(switched.stdout)")
        #expect(switched.stderr.contains("status 74") && switched.stderr.contains("store cannot be opened"), "\(switched.stderr)")
        #expect(switched.stderr.contains("dconf-service serves dconf again"), "\(switched.stderr)")
        #expect(session.files(in: session.servicesDirectory) == ["ca.desrt.dconf.service": own], "\(session.files(in: session.servicesDirectory))")
        #expect(session.files(in: session.unitDirectory).isEmpty, "\(session.files(in: session.unitDirectory))")
        #expect(try server.dconf(["write", "/org/example/app/size", "43"]).status == 0)
        #expect(session.ownDconfServiceServes, "\(session.ownerArguments())")
        #expect(try server.read("/org/example/app/size") == "43")
    }

    @Test("a prefsd started with --dconf-profile (and not --dconf) owns prefsd's name: the switch stops it, not taking it for one serving dconf")
    func dconfProfileIsNotDconf() async throws {
        let server = try await DconfServer(startingPrefsd: false)
        let bus = server.service.bus
        let session = try SwitchSession(server)
        defer { session.killServices() }
        #expect(try server.dconf(["write", "/org/example/app/size", "42"]).status == 0)
        // The bus starts the fixture's prefsd, which is given --dconf-profile.
        #expect(try session.prefs("write", "org.example.other", "key", "1").status == 0)
        let running = try #require(bus.processID(owning: SwitchSession.prefsdName))
        #expect(session.ownerArguments(SwitchSession.prefsdName).contains("--dconf-profile"), "\(session.ownerArguments(SwitchSession.prefsdName))")

        let switched = try session.prefs("dconf-switch", "--prefsd", ServiceFixture.binary.path)
        #expect(switched.status == 0, "\(switched.stdout)\(switched.stderr)")
        #expect(switched.stdout.contains("(pid \(running)) (it owned \(SwitchSession.prefsdName))"), "\(switched.stdout)")
        #expect(session.ownerArguments().contains("--dconf"), "\(session.ownerArguments())")
        #expect(try server.read("/org/example/app/size") == "42")
    }
}
