import CMalloc

#if canImport(Glibc)
    import Glibc
#endif

/// What a long-running process gives back of the memory its start used, once the start is
/// over: the heap's free blocks and the pages of files it has mapped to read (code, read-only
/// data).
///
/// Both are given back, not lost: malloc takes new pages when it needs them, and the files'
/// pages stay in the kernel's page cache, shared, and are mapped again when the process
/// touches them. What the process keeps mapped afterwards is what it has used since.
public enum ProcessMemory {
    /// Returns to the system the pages of the blocks malloc holds free, in every thread's
    /// arena and not only at the top of the heap (`malloc_trim`).
    public static func releaseFreedHeap() {
        _ = malloc_trim(0)
    }

    /// Unmaps from this process the pages of the files it maps read-only and has never
    /// written (`MADV_DONTNEED` on each `r-xp` and `r--p` mapping of a file without a page of
    /// its own: its executable's and its shared libraries' code and read-only data), so that
    /// it maps again only what it reads from now on. Nothing is lost: such a page holds what
    /// the file holds, and the kernel maps it back from its page cache, with a minor fault,
    /// when the process touches it again. A mapping with a page the process wrote (data the
    /// dynamic loader relocated, a debugger's breakpoint) is left as it is.
    ///
    /// Nothing is done while a debugger or tracer is attached (it may write into those
    /// pages at any moment) or when `/proc/self` cannot be read.
    /// - Returns: the bytes of the mappings given up.
    @discardableResult
    public static func releaseFilePages() -> Int {
        guard let status = readProcFile("/proc/self/status"), tracerPID(status) == 0,
            let smaps = readProcFile("/proc/self/smaps")
        else { return 0 }
        var released = 0
        for mapping in unwrittenFileMappings(smaps) {
            guard let address = UnsafeMutableRawPointer(bitPattern: mapping.lowerBound) else { continue }
            if madvise(address, mapping.count, MADV_DONTNEED) == 0 { released += mapping.count }
        }
        return released
    }

    /// The address ranges, in `smaps` (the text of `/proc/PID/smaps`), of the read-only
    /// private mappings of files (`r-xp`, `r--p`, with a path) that hold no page of their
    /// own (`Anonymous: 0 kB`).
    static func unwrittenFileMappings(_ smaps: [UInt8]) -> [Range<UInt>] {
        MemoryMapping.mappings(inSmaps: smaps).filter { mapping in
            (mapping.permissions == "r-xp" || mapping.permissions == "r--p") && mapping.file != nil && mapping.anonymous == 0
        }.map(\.addresses)
    }

    /// The `TracerPid` of `status` (the text of `/proc/PID/status`); nil when it has none.
    static func tracerPID(_ status: [UInt8]) -> Int? {
        for line in status.split(separator: UInt8(ascii: "\n")) where line.starts(with: "TracerPid:".utf8) {
            return Int(String(decoding: line.dropFirst("TracerPid:".utf8.count), as: UTF8.self).filter { !$0.isWhitespace })
        }
        return nil
    }

    /// The whole of a `/proc` file, read to its end (they report a size of 0, and a reader
    /// that trusts the size stops early).
    public static func readProcFile(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return contents }
            contents.append(contentsOf: chunk[0..<count])
        }
    }
}
