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

    /// Adds up the `Rss` of each mapping in `smaps`, by what it maps: the file at
    /// `executablePath` (the process's executable, its symbolic links resolved), another
    /// file, or none.
    public init(smaps: String, executablePath: String) {
        var file: String?
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if first.contains("-"), !first.hasSuffix(":") {
                // A mapping's header: address range, permissions, offset, device, inode, path.
                let name = fields.dropFirst(5).joined(separator: " ")
                file = name.hasPrefix("/") ? name : nil
            } else if first == "Rss:", fields.count >= 2, let kilobytes = Int(fields[1]) {
                let bytes = kilobytes * 1024
                total += bytes
                if let file {
                    if file == executablePath { executable += bytes } else { libraries += bytes }
                }
            }
        }
    }
}
