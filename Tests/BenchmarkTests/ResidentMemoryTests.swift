import BenchmarkKit
import Testing

@Suite("Resident memory from /proc/PID/smaps")
struct ResidentMemoryTests {
    @Test("each mapping's Rss counts as the executable's, another file's or neither, and the parts add up")
    func parts() {
        let smaps = """
            55d4a0000000-55d4a0200000 r--p 00000000 fd:01 1311 /usr/libexec/prefsd
            Size:               2048 kB
            Rss:                 512 kB
            Pss:                 512 kB
            55d4a0200000-55d4a0400000 r-xp 00200000 fd:01 1311 /usr/libexec/prefsd
            Rss:                1024 kB
            7f0000000000-7f0000021000 rw-p 00000000 00:00 0
            Rss:                 132 kB
            7f0000100000-7f0000200000 r-xp 00000000 fd:01 77 /usr/lib/x86_64-linux-gnu/libc.so.6
            Rss:                 880 kB
            7f0000300000-7f0000301000 r--p 00000000 fd:01 78 /usr/share/a file with spaces
            Rss:                   4 kB
            7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
            Rss:                  16 kB

            """
        let memory = ResidentMemory(smaps: Array(smaps.utf8), executablePath: "/usr/libexec/prefsd")
        #expect(memory.total == (512 + 1024 + 132 + 880 + 4 + 16) * 1024)
        #expect(memory.executable == (512 + 1024) * 1024)
        #expect(memory.libraries == (880 + 4) * 1024)
        #expect(memory.other == (132 + 16) * 1024)
    }

    @Test("private pages: anonymous memory and the executable's pages, each counted once; a shared library's left out")
    func privatePages() {
        let smaps = """
            55d4a0200000-55d4a0400000 r-xp 00200000 fd:01 1311 /usr/libexec/prefsd
            Rss:                1024 kB
            Anonymous:             0 kB
            55d4a0400000-55d4a0410000 r--p 00400000 fd:01 1311 /usr/libexec/prefsd
            Rss:                  64 kB
            Anonymous:            48 kB
            7f0000000000-7f0000021000 rw-p 00000000 00:00 0
            Rss:                 132 kB
            Anonymous:           132 kB
            7f0000100000-7f0000200000 r-xp 00000000 fd:01 77 /usr/lib/x86_64-linux-gnu/libc.so.6
            Rss:                 880 kB
            Anonymous:             0 kB
            7f0000200000-7f0000201000 rw-p 00100000 fd:01 77 /usr/lib/x86_64-linux-gnu/libc.so.6
            Rss:                   4 kB
            Anonymous:             4 kB

            """
        let memory = ResidentMemory(smaps: Array(smaps.utf8), executablePath: "/usr/libexec/prefsd")
        #expect(memory.anonymous == (48 + 132 + 4) * 1024)
        #expect(memory.executableAnonymous == 48 * 1024)
        #expect(memory.privatePages == (1024 + 64 + 132 + 4) * 1024)
    }
}
