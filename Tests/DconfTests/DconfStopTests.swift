import Dconf
import Foundation
import PrefsdTestSupport
import Testing

/// prefsd stopping while dconf's clients write: dconf's name passes to the next owner
/// (dconf-service, activated by the bus) with every change prefsd acknowledged in dconf's
/// file, and a change prefsd cannot hand on is answered with an error.
@Suite("prefsd stopping under dconf's writers", .serialized)
struct DconfStopTests {
    @Test("a SIGTERM while dconf write runs in a loop: every acknowledged write is served by dconf-service after, every other one failed")
    func stopUnderWriters() async throws {
        let server = try await DconfServer()
        let output = server.service.bus.directory.appendingPathComponent("writer.out")
        let total = 300
        // One dconf write per key, each printing whether it was acknowledged.
        let script = """
            i=0
            while [ $i -lt \(total) ]; do
              if dconf write /org/example/stop/k$i $i 2>>"$0.err"; then echo "ok $i"; else echo "failed $i"; fi
              i=$((i+1))
            done
            echo done
            """
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/bin/sh")
        writer.arguments = ["-c", "exec >\"$0\"; " + script, output.path]
        writer.environment = helperEnvironment.merging(server.environment) { $1 }
        try writer.run()
        defer { if writer.isRunning { kill(writer.processIdentifier, SIGKILL) } }
        func lines() -> [String] {
            ((try? String(contentsOf: output, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while lines().filter({ $0.hasPrefix("ok ") }).count < 30 {
            guard ContinuousClock.now < deadline, writer.isRunning else { throw FixtureError("the writer did not get 30 writes through: \(lines())") }
            try await Task.sleep(for: .milliseconds(10))
        }
        let status = server.service.stopService(signal: SIGTERM)
        #expect(status == 0, "prefsd's exit status: \(String(describing: status)); \(server.service.log.suffix(2000))")
        let stoppedAt = lines().count
        while lines().last != "done" {
            guard ContinuousClock.now < deadline else { throw FixtureError("the writer did not finish: \(lines().suffix(5))") }
            try await Task.sleep(for: .milliseconds(20))
        }
        let acknowledged = lines().compactMap { $0.hasPrefix("ok ") ? Int($0.dropFirst(3)) : nil }
        let failed = lines().filter { $0.hasPrefix("failed ") }
        #expect(acknowledged.contains { $0 >= stoppedAt }, "no write went to dconf-service after prefsd stopped: \(lines().suffix(5))")
        // What dconf-service serves now, read through it (it owns the name) and its file.
        let dump = try server.dconf(["dump", "/org/example/stop/"])
        #expect(dump.status == 0, "\(dump.stderr)")
        let served = Set(dump.stdout.split(separator: "\n").filter { $0.hasPrefix("k") }.map(String.init))
        let missing = acknowledged.filter { !served.contains("k\($0)=\($0)") }
        #expect(missing.isEmpty, "acknowledged but not served after the hand-over: \(missing); failed: \(failed)")
        print(
            "stop under writers: \(acknowledged.count) acknowledged (\(acknowledged.filter { $0 >= stoppedAt }.count) after the stop), \(failed.count) refused")
    }
}
