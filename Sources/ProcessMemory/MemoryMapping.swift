/// One mapping of a process's address space, as `/proc/PID/smaps` lists it.
public struct MemoryMapping: Sendable, Equatable {
    /// Its addresses.
    public var addresses: Range<UInt>
    /// Its permissions as smaps spells them: `r-xp`, `r--p`, `rw-p`, `rw-s`…
    public var permissions: String
    /// The file it maps; nil for memory of no file (the heap, stacks, `[vdso]`…).
    public var file: String?
    /// Its resident bytes (`Rss`).
    public var resident = 0
    /// Its resident bytes of the process's own (`Anonymous`): none in a mapping of a file
    /// the process never wrote.
    public var anonymous = 0

    /// The mappings in `smaps`, the text of `/proc/PID/smaps`, in its order.
    public static func mappings(inSmaps smaps: [UInt8]) -> [MemoryMapping] {
        var mappings: [MemoryMapping] = []
        for line in smaps.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 5, omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if first.last == UInt8(ascii: ":") {
                // A field of the mapping above, in kB.
                guard !mappings.isEmpty, fields.count >= 2, let kilobytes = Int(String(decoding: fields[1], as: UTF8.self)) else {
                    continue
                }
                if first.elementsEqual("Rss:".utf8) {
                    mappings[mappings.count - 1].resident = kilobytes * 1024
                } else if first.elementsEqual("Anonymous:".utf8) {
                    mappings[mappings.count - 1].anonymous = kilobytes * 1024
                }
                continue
            }
            // A mapping: "start-end perms offset dev inode [path]".
            let bounds = first.split(separator: UInt8(ascii: "-"))
            guard fields.count >= 5, bounds.count == 2, let start = UInt(String(decoding: bounds[0], as: UTF8.self), radix: 16),
                let end = UInt(String(decoding: bounds[1], as: UTF8.self), radix: 16), start < end
            else { continue }
            let name = fields.count == 6 ? String(decoding: fields[5].drop(while: { $0 == UInt8(ascii: " ") }), as: UTF8.self) : ""
            mappings.append(
                MemoryMapping(
                    addresses: start..<end, permissions: String(decoding: fields[1], as: UTF8.self),
                    file: name.hasPrefix("/") ? name : nil))
        }
        return mappings
    }
}
