import DconfFormats
import GVDB

/// prefsd's mirror of dconf's user database between two writes: its values by dconf key, and
/// the same values laid out for the file (``DconfDatabaseBuilder``, with prefsd's mark),
/// changed key by key so that writing the file after a change encodes nothing again.
public struct DconfMirrorDatabase: Sendable {
    /// The values, by dconf key.
    public private(set) var values: [String: DconfValue] = [:]
    private var database = DconfDatabaseBuilder()

    /// A database holding no key, only prefsd's `mark`.
    public init(mark: DconfMirror.Mark = DconfMirror.Mark(store: nil)) {
        // The mark's value, a string, is a valid GVariant: storing it cannot fail.
        try? database.setAnnotation(mark.value, named: DconfMirror.markName)
    }

    /// Sets `path` to `value`, or removes it when `value` is nil. Throws, changing nothing,
    /// when `path` is not a dconf key or `value` cannot be stored in GVDB.
    public mutating func set(_ path: String, to value: DconfValue?) throws {
        try database.setValue(value?.gvdbValue(), forKey: path)
        values[path] = value
    }

    /// The database file of the values, with prefsd's mark (see ``DconfMirror/file(_:)``).
    /// - Throws: `GVDBError` when the file would pass GVDB's 4 GiB.
    public func file() throws -> [UInt8] {
        try database.file()
    }
}
