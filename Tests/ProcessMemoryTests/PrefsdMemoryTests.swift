import Foundation
import PreferencesModel
import PrefsdTestSupport
import ProcessMemory
import Testing

@Suite("prefsd's memory once calls stop")
struct PrefsdMemoryTests {
    /// The resident bytes of the read-only mappings of `executable` (its code and read-only
    /// data) in the process `pid`, from /proc/PID/smaps: what prefsd gives back when idle.
    private func readOnlyPages(_ pid: Int32, _ executable: String) throws -> Int {
        let smaps = try #require(ProcessMemory.readProcFile("/proc/\(pid)/smaps"), "prefsd (\(pid)) is gone")
        return MemoryMapping.mappings(inSmaps: smaps).filter {
            $0.file == executable && ($0.permissions == "r-xp" || $0.permissions == "r--p") && $0.anonymous == 0
        }.reduce(0) { $0 + $1.resident }
    }

    @Test("after each burst of calls prefsd gives back the pages of its code it mapped, and answers as before")
    func givesBackCodeEachTime() async throws {
        let fixture = try await ServiceFixture()
        let pid = try #require(fixture.pid)
        let executable = ServiceFixture.binary.resolvingSymlinksInPath().path
        let client = ServiceClient(connection: try fixture.connect())
        // Two bursts, each given time to end: the second comes long after the start's own
        // release, so only a release after calls gives its pages back.
        for burst in 0..<2 {
            // The most mapped after any of its calls: on a loaded machine a release may come
            // between two of them, and the calls after it map their code again.
            var busy = 0
            for index in 0..<20 {
                try await client.write("com.example.Memory", "key\(index)", .integer(Int64(index + burst)))
                busy = max(busy, try readOnlyPages(pid, executable))
            }
            #expect(try await client.readDomain("com.example.Memory").count == 20)
            busy = max(busy, try readOnlyPages(pid, executable))
            var idle = busy
            let deadline = ContinuousClock.now + .seconds(30)
            while idle * 2 >= busy, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
                idle = try readOnlyPages(pid, executable)
            }
            #expect(
                idle * 2 < busy,
                "burst \(burst): up to \(busy / 1024) KiB of prefsd's code and read-only data mapped after its calls, \(idle / 1024) KiB 30 s later")
            #expect(try await client.readValue("com.example.Memory", "key3") == .integer(Int64(3 + burst)), "prefsd answers after giving its pages back")
        }
        #expect(fixture.isRunning)
    }
}
