import Testing

@testable import ProcessMemory

#if canImport(Glibc)
    import Glibc
#endif

@Suite("What a process gives back of its start's memory")
struct ProcessMemoryTests {
    /// Three mappings of /proc/PID/smaps, trimmed to the fields that matter here.
    private static let smaps = """
        55d4a0000000-55d4a0200000 r--p 00000000 fd:01 1311 /usr/libexec/prefsd
        Size:               2048 kB
        Rss:                 512 kB
        Anonymous:             0 kB
        55d4a0200000-55d4a0400000 r-xp 00200000 fd:01 1311 /usr/libexec/prefsd
        Size:               2048 kB
        Anonymous:             0 kB
        55d4a0400000-55d4a0410000 r--p 00400000 fd:01 1311 /usr/libexec/prefsd
        Size:                 64 kB
        Anonymous:            64 kB
        55d4a0410000-55d4a0420000 rw-p 00410000 fd:01 1311 /usr/libexec/prefsd
        Anonymous:            16 kB
        7f0000000000-7f0000021000 rw-p 00000000 00:00 0
        Anonymous:           132 kB
        7f0000100000-7f0000101000 r--p 00000000 fd:01 77 /usr/share/a file with spaces
        Anonymous:             0 kB
        7fff00000000-7fff00002000 r-xp 00000000 00:00 0                          [vdso]
        Anonymous:             0 kB

        """

    @Test("the read-only mappings of files with no page of their own are given up; written, writable and anonymous ones are not")
    func unwrittenMappings() {
        let ranges = ProcessMemory.unwrittenFileMappings(Array(Self.smaps.utf8))
        #expect(
            ranges == [
                0x55d4_a000_0000..<0x55d4_a020_0000,
                0x55d4_a020_0000..<0x55d4_a040_0000,
                0x7f00_0010_0000..<0x7f00_0010_1000,
            ])
    }

    @Test("each mapping is read with its addresses, permissions, file (spaces kept), resident and own bytes")
    func mappings() {
        let mappings = MemoryMapping.mappings(inSmaps: Array(Self.smaps.utf8))
        #expect(mappings.count == 7)
        #expect(
            mappings.first
                == MemoryMapping(
                    addresses: 0x55d4_a000_0000..<0x55d4_a020_0000, permissions: "r--p", file: "/usr/libexec/prefsd",
                    resident: 512 * 1024, anonymous: 0))
        #expect(mappings[2].anonymous == 64 * 1024)
        #expect(mappings[4].file == nil)
        #expect(mappings[4].anonymous == 132 * 1024)
        #expect(mappings[5].file == "/usr/share/a file with spaces")
        #expect(mappings[6].permissions == "r-xp")
        #expect(mappings[6].file == nil, "[vdso] is no file")
    }

    @Test("a tracer's process ID is read from the status; a missing line reads as none")
    func tracer() {
        #expect(ProcessMemory.tracerPID(Array("Name:\tprefsd\nTracerPid:\t4242\nUid:\t0\n".utf8)) == 4242)
        #expect(ProcessMemory.tracerPID(Array("Name:\tprefsd\nTracerPid:\t0\n".utf8)) == 0)
        #expect(ProcessMemory.tracerPID(Array("Name:\tprefsd\n".utf8)) == nil)
    }

    @Test("this process gives up its code and read-only data, maps less, and runs on as before")
    func releaseInThisProcess() throws {
        func residentBytes() throws -> Int {
            let status = try #require(ProcessMemory.readProcFile("/proc/self/status"))
            let line = try #require(String(decoding: status, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
            return try #require(Int(line.split(separator: " ").dropFirst().first ?? "")) * 1024
        }
        let status = try #require(ProcessMemory.readProcFile("/proc/self/status"))
        // Under a debugger nothing is given up, by design: this test then has nothing to see.
        guard ProcessMemory.tracerPID(status) == 0 else { return }
        let before = try residentBytes()
        let released = ProcessMemory.releaseFilePages()
        let after = try residentBytes()
        #expect(released > 0)
        #expect(after < before, "RSS \(before) bytes before, \(after) after giving up \(released) bytes of mappings")
        // The code comes back from the page cache as it runs: the same results as before.
        #expect(ProcessMemory.unwrittenFileMappings(Array(Self.smaps.utf8)).count == 3)
        ProcessMemory.releaseFreedHeap()
        #expect(Array(repeating: 7, count: 1000).reduce(0, +) == 7000)
    }
}
