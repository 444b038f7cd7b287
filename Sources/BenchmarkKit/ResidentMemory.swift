import ProcessMemory

/// One process's resident memory, in bytes, from the text of its `/proc/PID/smaps`; the parts
/// add up to the whole.
public struct ResidentMemory: Sendable, Equatable {
    /// The resident set (`Rss`): every page mapped in the process, shared or not.
    public var total = 0
    /// Pages of mappings of the process's own executable, relocated data included.
    public var executable = 0
    /// Pages of mappings of other files: shared libraries, and the few files a service maps
    /// (SQLite's `-shm`).
    public var libraries = 0
    /// The rest: heap, thread stacks, malloc's arenas.
    public var other: Int { total - executable - libraries }
    /// Pages of the process's own, in every mapping (`Anonymous`): its heap, stacks and
    /// arenas, and the pages of files it wrote (data the dynamic loader relocated).
    public var anonymous = 0
    /// Of ``executable``, the pages the process wrote (counted in ``anonymous`` too).
    public var executableAnonymous = 0
    /// What the process holds that no other process shares: its anonymous memory and the
    /// pages of its own executable. A shared library's pages are left out, as every program
    /// of a session that uses the library maps the same ones.
    public var privatePages: Int { anonymous + executable - executableAnonymous }

    /// Adds up the `Rss` and `Anonymous` of each mapping in `smaps` (the text of
    /// `/proc/PID/smaps`), by what it maps: the file at `executablePath` (the process's
    /// executable, its symbolic links resolved), another file, or none.
    public init(smaps: [UInt8], executablePath: String) {
        for mapping in MemoryMapping.mappings(inSmaps: smaps) {
            total += mapping.resident
            anonymous += mapping.anonymous
            if mapping.file == executablePath {
                executable += mapping.resident
                executableAnonymous += mapping.anonymous
            } else if mapping.file != nil {
                libraries += mapping.resident
            }
        }
    }
}
