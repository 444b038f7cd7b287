import DconfFormats

/// The `locks/` files of a dconf system database (``DconfLocksFile``), each locked key
/// mapped through the GSettings path rule.
enum DconfLocksReader {
    /// The keys one locks file locks, and the lines that could not be used.
    static func read(_ bytes: [UInt8]) -> (keys: Set<MappedKey>, problems: [FileProblem]) {
        let (locks, unusable) = DconfLocksFile.read(bytes)
        var keys: Set<MappedKey> = []
        var problems = unusable.map { FileProblem(line: $0.line, message: $0.message) }
        for lock in locks {
            do {
                keys.insert(try MappedKey.mapping(lock.key))
            } catch {
                problems.append(FileProblem(line: lock.line, message: error.description))
            }
        }
        return (keys, problems.sorted { $0.line < $1.line })
    }
}
