import BusTestSupport
import Foundation
import Testing

/// The test helper that runs a command to its end (posix_spawn, not Foundation's Process).
@Suite("runCommand")
struct RunCommandTests {
    @Test("status, standard output and standard error come back; a signal's number is the status")
    func results() throws {
        let ran = try runCommand("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"])
        #expect(ran.status == 3 && ran.stdout == "out\n" && ran.stderr == "err\n")
        #expect(try runCommand("/bin/sh", ["-c", "kill -TERM $$"]).status == SIGTERM)
        #expect(try runCommand("/usr/bin/env", [], environment: ["PREFSD_TEST_MARK": "x"]).stdout.contains("PREFSD_TEST_MARK=x\n"))
    }

    @Test("a command past its timeout is killed, and its status says SIGKILL")
    func timeout() throws {
        let started = ContinuousClock.now
        let ran = try runCommand("/bin/sleep", ["60"], timeout: .milliseconds(300))
        #expect(ran.status == SIGKILL)
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test("with 1,500 descriptors open in the test process, commands still run and inherit none of them")
    func manyDescriptors() throws {
        let opened = (0..<1_500).map { _ in open("/dev/null", O_RDONLY) }
        defer { opened.forEach { close($0) } }
        try #require(opened.allSatisfy { $0 >= 0 }, "could not open 1,500 descriptors (ulimit -n)")
        let ran = try runCommand("/bin/sh", ["-c", "ls /proc/self/fd | wc -l"])
        #expect(ran.status == 0)
        // 0, 1, 2 and the one ls opens to list them.
        #expect(Int(ran.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == 4, "\(ran.stdout)")
    }
}
