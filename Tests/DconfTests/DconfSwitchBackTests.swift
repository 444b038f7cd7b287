import Dconf
import Foundation
import PrefsdTestSupport
import Testing

/// `prefs dconf-switch-back` while dconf's clients write, and what a later switch takes in:
/// the command ends once the prefsd it stopped has gone, the copy it hands back tells the
/// next switch which keys were reset under dconf-service, and the copies of what was taken
/// in stay few.
@Suite("prefs dconf-switch-back under writers, and the copies a switch keeps", .serialized)
struct DconfSwitchBackTests {
    @Test("switch back while dconf write runs in a loop: done at once, and a key reset under dconf-service afterwards stays reset through the next switch")
    func backUnderWriters() async throws {
        let server = try await DconfServer(startingPrefsd: false)
        let session = try SwitchSession(server)
        defer { session.killServices() }
        #expect(try server.dconf(["load", "/"], input: "[org/example/app]\nidle=uint32 600\nsize=42\n").status == 0)
        let switched = try session.prefs("dconf-switch", "--prefsd", ServiceFixture.binary.path)
        #expect(switched.status == 0, "\(switched.stdout)\(switched.stderr)")

        // Three writers, each a loop of `dconf write` until told to stop.
        let stop = server.service.bus.directory.appendingPathComponent("stop-writers")
        let writers = try (0..<3).map { number in
            let writer = Process()
            writer.executableURL = URL(fileURLWithPath: "/bin/sh")
            writer.arguments = [
                "-c", "i=0; while [ ! -e \"$0\" ]; do i=$((i+1)); dconf write /org/example/writer/w\(number) $i 2>/dev/null; done", stop.path,
            ]
            writer.environment = helperEnvironment.merging(server.environment) { $1 }
            try writer.run()
            return writer
        }
        defer { for writer in writers { _ = BusTestSupport.stop(writer, signal: SIGKILL) } }
        let deadline = ContinuousClock.now + .seconds(60)
        while try server.read("/org/example/writer/w2").isEmpty {
            guard ContinuousClock.now < deadline else { throw FixtureError("the writers wrote nothing") }
            try await Task.sleep(for: .milliseconds(20))
        }

        let started = ContinuousClock.now
        let back = try session.prefs("dconf-switch-back")
        print("dconf-switch-back under three dconf write loops: \(ContinuousClock.now - started)")
        #expect(back.status == 0, "\(back.stdout)\(back.stderr)")
        #expect(back.stdout.contains("holds every value"), "\(back.stdout)")
        _ = FileManager.default.createFile(atPath: stop.path, contents: nil)
        for writer in writers { #expect(waitForExit(of: writer) != nil) }
        let handedBack = DconfFiles(name: "user", environment: server.environment).handedBackPath
        #expect(FileManager.default.fileExists(atPath: handedBack), "no copy handed back")

        // Reset under dconf-service, then switched over again: the reset holds.
        #expect(try server.dconf(["reset", "/org/example/app/idle"]).status == 0)
        #expect(session.ownerArguments().last?.hasSuffix("dconf-service") == true, "\(session.ownerArguments())")
        let again = try session.prefs("dconf-switch", "--prefsd", ServiceFixture.binary.path)
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(try server.read("/org/example/app/idle") == "")
        #expect(try session.prefs("read", "org.example.app", "idle").status != 0)
        #expect(try server.read("/org/example/app/size") == "42")
    }

    @Test("copies of what was taken in: at most three kept, the newest; a switch with nothing new to take in says so and names no copy")
    func takenInCopies() async throws {
        let server = try await DconfServer(startingPrefsd: false)
        let session = try SwitchSession(server)
        defer { session.killServices() }
        #expect(try server.dconf(["write", "/org/example/app/size", "42"]).status == 0)
        let directory = server.databaseFile.deletingLastPathComponent()
        // Four earlier switches' copies.
        let database = try Data(contentsOf: server.databaseFile)
        for day in 1...4 {
            try database.write(to: directory.appendingPathComponent("user.taken-in-2020010\(day)T000000Z"))
        }
        func copies() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("user.taken-in-") }.sorted()
        }

        let switched = try session.prefs("dconf-switch", "--prefsd", ServiceFixture.binary.path)
        #expect(switched.status == 0, "\(switched.stdout)\(switched.stderr)")
        let kept = try copies()
        #expect(kept.count == 3, "\(kept)")
        #expect(kept.first == "user.taken-in-20200103T000000Z", "\(kept)")
        let newest = try #require(kept.last)
        #expect(!newest.hasPrefix("user.taken-in-2020"), "\(kept)")
        #expect(switched.stdout.contains("kept in \(directory.appendingPathComponent(newest).path)"), "\(switched.stdout)")

        #expect(try session.prefs("dconf-switch-back").status == 0)
        let again = try session.prefs("dconf-switch", "--prefsd", ServiceFixture.binary.path)
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(again.stdout.contains("nothing new to take in"), "\(again.stdout)")
        #expect(!again.stdout.contains("taken-in-"), "\(again.stdout)")
        #expect(try copies() == kept)
        #expect(try server.read("/org/example/app/size") == "42")
    }
}
