/// What dconf's `Notify(s prefix, as changes, s tag)` signal says of a change, as
/// `dconf_changeset_describe` makes it: the paths' longest common prefix (cut back to a
/// directory when there are several paths) and each path without it, sorted.
public struct DconfNotification: Sendable, Hashable {
    /// The common prefix: the one key itself, or a directory ending in `/`.
    public let prefix: String
    /// The changed paths without the prefix, sorted (`""` for the one key itself).
    public let changes: [String]

    /// The notification of the changed `paths` (keys, or directories reset); `nil` when
    /// there are none.
    public init?(paths: some Collection<String>) {
        guard let first = paths.first else { return nil }
        var length = first.utf8.count
        let firstBytes = Array(first.utf8)
        for path in paths.dropFirst() {
            length = zip(firstBytes.prefix(length), path.utf8).prefix { $0 == $1 }.count
        }
        if paths.count > 1 {
            while length > 0, firstBytes[length - 1] != UInt8(ascii: "/") { length -= 1 }
        }
        prefix = String(decoding: firstBytes.prefix(length), as: UTF8.self)
        changes = paths.map { String(decoding: Array($0.utf8.dropFirst(length)), as: UTF8.self) }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}
