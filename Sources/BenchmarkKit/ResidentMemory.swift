import ProcessMemory

/// One process's resident memory, in bytes, from the text of its `/proc/PID/smaps`; the parts
/// add up to the whole.
public struct ResidentMemory: Sendable, Equatable {
    /// The resident set (`Rss`).
    public var total = 0
    /// Pages of mappings of the process's own executable, relocated data included.
    public var executable = 0
    /// Pages of mappings of other files: shared libraries, and the few files a service maps
    /// (SQLite's `-shm`).
    public var libraries = 0
    /// The rest: heap, thread stacks, malloc's arenas.
    public var other: Int { total - executable - libraries }

    /// Adds up the `Rss` of each mapping in `smaps` (the text of `/proc/PID/smaps`), by what
    /// it maps: the file at `executablePath` (the process's executable, its symbolic links
    /// resolved), another file, or none.
    public init(smaps: [UInt8], executablePath: String) {
        for mapping in MemoryMapping.mappings(inSmaps: smaps) {
            total += mapping.resident
            if mapping.file == executablePath {
                executable += mapping.resident
            } else if mapping.file != nil {
                libraries += mapping.resident
            }
        }
    }
}
